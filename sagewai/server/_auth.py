"""Who is calling: the API key of a request, checked, rate-limited and turned into a scope.

Every request but ``/v1/health`` and ``/v1/ready`` carries a key (``Authorization: Bearer
sgw_...`` or ``X-API-Key: sgw_...``). The key decides the project and, for a key bound to a
user, the user; a request may repeat them (``project``, ``user_id`` in the query or the body)
but never name others: that is a 403, whatever the role.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sagewai.errors import AuthenticationError, FactNotFoundError, PermissionDeniedError
from sagewai.server._keys import ApiKey, Role, parse_token, secret_matches
from sagewai.server._ratelimit import RateLimiter
from sagewai.server._state import ServerState

__all__ = ["Authenticator", "Caller"]


@dataclass(frozen=True, slots=True)
class Caller:
    """The key a request came with, and the checks every endpoint makes with it."""

    key: ApiKey

    @property
    def project_id(self) -> str:
        """The project every read and write of this request stays in."""
        return self.key.project_id

    def require(self, role: Role) -> None:
        """Refuse a request the key's role does not allow.

        Raises:
            PermissionDeniedError: the key's role is below ``role``.
        """
        if not self.key.role.allows(role):
            raise PermissionDeniedError(
                f"this needs a {role.value} key; key {self.key.id} is {self.key.role.value}"
            )

    def check_project(self, project: str | None) -> str:
        """The key's project; a request naming another one is refused.

        Raises:
            PermissionDeniedError: ``project`` is not the key's project.
        """
        if project is not None and project != self.key.project_id:
            raise PermissionDeniedError(f"key {self.key.id} is not bound to that project")
        return self.key.project_id

    def user(self, user_id: str | None) -> str | None:
        """The user a request acts for: the key's user, or for a project key the one named.

        Raises:
            PermissionDeniedError: the key is bound to another user.
        """
        bound = self.key.user_id
        if bound is None:
            return user_id
        if user_id is not None and user_id != bound:
            raise PermissionDeniedError(f"key {self.key.id} is bound to another user")
        return bound

    def project_wide(self, what: str) -> None:
        """Refuse to a user's key what reads every user's records (the graph, an export).

        Raises:
            PermissionDeniedError: the key is bound to a user.
        """
        if self.key.user_id is not None:
            raise PermissionDeniedError(
                f"{what} reads every user's memory; use a key that is not bound to a user"
            )

    def may_read(self, owner: str | None) -> bool:
        """Whether a record of user ``owner`` (``None``: project-wide) is readable."""
        return self.key.user_id is None or owner in (None, self.key.user_id)

    def may_change(self, owner: str | None) -> bool:
        """Whether a record of user ``owner`` may be changed (a user's key: its own only)."""
        return self.key.user_id is None or owner == self.key.user_id

    def readable(self, fact_id: str, owner: str | None) -> None:
        """Raise as if the record did not exist when this key may not read it.

        Raises:
            FactNotFoundError: the record belongs to another user.
        """
        if not self.may_read(owner):
            raise FactNotFoundError(fact_id)


class Authenticator:
    """Checks keys against the server state, with a short cache, and counts requests.

    Args:
        state: Where the keys live.
        limiter: The per-key rate limiter.
        cache_seconds: How long a looked-up key is trusted before it is read again.
    """

    def __init__(self, state: ServerState, limiter: RateLimiter, *, cache_seconds: float) -> None:
        self.state = state
        self.limiter = limiter
        self.cache_seconds = cache_seconds
        self._cache: dict[str, tuple[float, ApiKey | None]] = {}

    async def _lookup(self, key_id: str) -> ApiKey | None:
        now = time.monotonic()
        cached = self._cache.get(key_id)
        if cached is not None and now - cached[0] < self.cache_seconds:
            return cached[1]
        key = await self.state.key(key_id)
        if len(self._cache) > 10_000:  # unknown ids must not grow the cache without bound
            self._cache.clear()
        self._cache[key_id] = (now, key)
        return key

    async def caller(self, authorization: str | None, api_key: str | None) -> Caller:
        """The caller of a request with these headers.

        Raises:
            AuthenticationError: no key, a malformed, unknown or revoked key.
            RateLimitedError: the key is over its rate limit.
        """
        token = api_key
        if token is None and authorization is not None:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() != "bearer" or not value.strip():
                raise AuthenticationError("the Authorization header must be 'Bearer <key>'")
            token = value.strip()
        if token is None:
            raise AuthenticationError(
                "this needs an API key: send 'Authorization: Bearer <key>' (sagewai keys create)"
            )
        key_id, secret = parse_token(token)
        key = await self._lookup(key_id)
        if key is None or not secret_matches(key, secret):
            raise AuthenticationError("the API key is not valid")
        if not key.active:
            raise AuthenticationError(f"the API key {key.id} was revoked")
        self.limiter.check(key.id)
        return Caller(key)
