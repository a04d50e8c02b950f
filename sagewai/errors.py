"""The one exception tree of sagewai.

Every error sagewai raises derives from :class:`SagewaiError`, so ``except SagewaiError`` catches
all of them. Two branches tell a caller what to do next:

* :class:`ConfigurationError` – the caller asked for something that cannot work (a bad argument, a
  missing optional dependency, a missing model file). Retrying will not help; fix the call.
* :class:`SagewaiRuntimeError` – something failed while working (a backend is unreachable, a call
  timed out, an extraction failed). Retrying later may help.

Driver exceptions (asyncpg, qdrant, sqlite3, litellm, nebula3) are translated into this tree where
they enter sagewai, so user code never has to import a driver to handle errors.

```
SagewaiError
├── ConfigurationError
│   ├── MissingDependencyError
│   ├── ModelNotAvailableError
│   ├── InvalidInputError
│   │   └── ScopeError
│   ├── AuthenticationError
│   └── PermissionDeniedError
└── SagewaiRuntimeError
    ├── BackendError
    │   ├── BackendUnavailableError
    │   └── IntegrityError
    │       └── FactConflictError
    ├── FactNotFoundError
    ├── LockedError
    ├── RateLimitedError
    ├── SagewaiTimeoutError
    └── ExtractionError
```
"""

from __future__ import annotations

__all__ = [
    "AuthenticationError",
    "BackendError",
    "BackendUnavailableError",
    "ConfigurationError",
    "ExtractionError",
    "FactConflictError",
    "FactNotFoundError",
    "IntegrityError",
    "InvalidInputError",
    "LockedError",
    "MissingDependencyError",
    "ModelNotAvailableError",
    "PermissionDeniedError",
    "RateLimitedError",
    "SagewaiError",
    "SagewaiRuntimeError",
    "SagewaiTimeoutError",
    "ScopeError",
]


class SagewaiError(Exception):
    """Root of every error raised by sagewai."""


class ConfigurationError(SagewaiError):
    """The call cannot work as written: fix the arguments or the installation."""


class MissingDependencyError(ConfigurationError, ImportError):
    """An optional dependency is not installed; the message holds the exact pip command."""

    def __init__(self, package: str, extra: str, feature: str) -> None:
        self.package = package
        self.extra = extra
        self.feature = feature
        super().__init__(
            f"{feature} needs the optional dependency {package!r}, which is not installed. "
            f'Install it with: pip install "sagewai[{extra}]"'
        )


class ModelNotAvailableError(ConfigurationError):
    """A model (weights, tokenizer) is missing here; sagewai never downloads at run time."""


class InvalidInputError(ConfigurationError, ValueError):
    """An argument or a record failed validation (empty, too large, malformed, hostile)."""


class ScopeError(InvalidInputError):
    """A scope was named without the identifier it needs (a USER search without a user_id, ...)."""


class AuthenticationError(ConfigurationError):
    """A request to the memory server came without an API key, or with one that is not valid
    (unknown, malformed or revoked): HTTP 401."""


class PermissionDeniedError(ConfigurationError):
    """The API key is valid but may not do this: its role is too low, or the request names a
    project or user outside the key's binding: HTTP 403."""


class SagewaiRuntimeError(SagewaiError):
    """Something failed while working; retrying later may succeed."""


class BackendError(SagewaiRuntimeError):
    """A storage backend failed; the original driver error is chained as ``__cause__``."""


class BackendUnavailableError(BackendError):
    """A backend cannot be reached (server down, connection refused, file locked by a process)."""


class IntegrityError(BackendError):
    """A write was rejected because it would break the store's invariants."""


class FactConflictError(IntegrityError):
    """A new fact reuses an id the store already holds (in this project or another).

    A fact is never overwritten silently: choose another ``fact_id``, or change the stored fact
    through ``supersede``/``set_status``/``delete``. When the id is held outside the caller's
    project (``in_project=False``), the message says only that the id cannot be used: it never
    tells one project what another holds.
    """

    def __init__(self, fact_id: str, *, in_project: bool = True) -> None:
        self.fact_id = fact_id
        if in_project:
            message = f"a fact with id {fact_id!r} already exists; fact ids are never reused"
        else:
            message = f"the fact id {fact_id!r} cannot be used; choose another fact_id"
        super().__init__(message)


class FactNotFoundError(SagewaiRuntimeError, KeyError):
    """No fact with that id exists in this project."""

    def __init__(self, fact_id: str) -> None:
        self.fact_id = fact_id
        super().__init__(fact_id)

    def __str__(self) -> str:
        return f"no fact with id {self.fact_id!r} in this project"


class LockedError(SagewaiRuntimeError):
    """Another process holds the lock (e.g. a consolidation run on the same project)."""


class RateLimitedError(SagewaiRuntimeError):
    """An API key sent more requests than its rate limit allows: HTTP 429; retry after
    ``retry_after`` seconds."""

    def __init__(self, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(f"rate limit exceeded; retry in {retry_after:.2f} s")


class SagewaiTimeoutError(SagewaiRuntimeError, TimeoutError):
    """An operation did not finish in the time it was given."""


class ExtractionError(SagewaiRuntimeError):
    """An extractor failed on an input (model error, unparsable output after retries)."""
