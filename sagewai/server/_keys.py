"""API keys of the memory server: roles, the key record, and how a key is made and checked.

Why keys look the way they do: a key is shown once, when it is made, and then only its hash is
kept, so a stolen key database opens nothing. A key reads ``sgw_<id>_<secret>``: the id is
public (it names the key in ``sagewai keys list`` and in the server's log), the secret is 32
random bytes. A random 256-bit secret needs no slow password hash: its SHA-256 is stored and
compared in constant time, as GitHub and Stripe do with their tokens.

A key is bound to an org (optional), a project and optionally a user, with one role. Every
request is scoped by its key: the project it reads and writes is the key's, and a key bound to a
user acts for that user alone.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sagewai.core import utcnow, validate_identifier
from sagewai.errors import AuthenticationError, InvalidInputError

__all__ = [
    "TOKEN_PREFIX",
    "ApiKey",
    "NewKey",
    "Role",
    "hash_secret",
    "new_key",
    "parse_token",
    "secret_matches",
]

TOKEN_PREFIX = "sgw"
"""The first part of every key, so a leaked key is recognisable (and greppable) as sagewai's."""
_ID = re.compile(r"^[0-9a-f]{12}$")
_SECRET = re.compile(r"^[A-Za-z0-9_-]{43}$")


class Role(StrEnum):
    """What a key may do; each role includes the ones before it: read < write < admin.

    * ``read``: search, list, get, history, provenance, profile, the graph and memory health;
    * ``write``: also remember, add facts, revert and forget;
    * ``admin``: also consolidate and export the whole project.

    Example:
        >>> Role.ADMIN.allows(Role.WRITE), Role.READ.allows(Role.WRITE)
        (True, False)
    """

    READ = "read"
    WRITE = "write"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        """0 for read, 1 for write, 2 for admin."""
        return list(Role).index(self)

    def allows(self, needed: Role) -> bool:
        """Whether a key of this role may do what ``needed`` may."""
        return self.rank >= needed.rank


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiKey:
    """A key as the server keeps it: its binding and role, never the key itself.

    Attributes:
        id: The public part of the key (12 hex characters).
        project_id: The one project the key reads and writes.
        role: What it may do.
        org_id: The project's organisation; ORG-scope facts of the org are readable.
        user_id: When set, the key acts for this user only (its own facts, and project-wide
            facts to read); when ``None`` it may act for any user of the project.
        name: A label for people ("billing agent", "alice's laptop").
        created_at: When it was made.
        revoked_at: When it was revoked; a revoked key is refused.
        secret_hash: SHA-256 of the secret, hex.
    """

    id: str
    project_id: str
    role: Role
    org_id: str | None = None
    user_id: str | None = None
    name: str = ""
    created_at: datetime
    revoked_at: datetime | None = None
    secret_hash: str = ""

    @property
    def active(self) -> bool:
        """False once revoked."""
        return self.revoked_at is None

    def public(self) -> dict[str, str | None]:
        """The key's fields a person or a client may see (never the hash), JSON-ready."""
        return {
            "id": self.id,
            "org_id": self.org_id,
            "project_id": self.project_id,
            "user_id": self.user_id,
            "role": self.role.value,
            "name": self.name,
            "created_at": self.created_at.isoformat(),
            "revoked_at": None if self.revoked_at is None else self.revoked_at.isoformat(),
        }


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just made: the record to store and the token to show, once, to its owner."""

    key: ApiKey
    token: str


def hash_secret(secret: str) -> str:
    """The stored form of a key's secret (SHA-256, hex)."""
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def new_key(
    *,
    project_id: str,
    role: Role | str,
    org_id: str | None = None,
    user_id: str | None = None,
    name: str = "",
) -> NewKey:
    """Make a key: a fresh id and secret, the record to store and the token to show.

    Raises:
        InvalidInputError: an identifier is empty, too long or holds control characters, or
            the role is unknown.

    Example:
        >>> made = new_key(project_id="demo", role="read")
        >>> made.token.startswith("sgw_" + made.key.id + "_"), made.key.role
        (True, <Role.READ: 'read'>)
        >>> parse_token(made.token)[0] == made.key.id
        True
    """
    validate_identifier(project_id, "project_id")
    for value, what in ((org_id, "org_id"), (user_id, "user_id")):
        if value is not None:
            validate_identifier(value, what)
    try:
        role = Role(role)
    except ValueError as exc:
        raise InvalidInputError(f"role must be one of {[r.value for r in Role]}") from exc
    if not isinstance(name, str) or len(name) > 200 or not name.isprintable():
        raise InvalidInputError("name must be printable text of at most 200 characters")
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    record = ApiKey(
        id=key_id,
        project_id=project_id,
        role=role,
        org_id=org_id,
        user_id=user_id,
        name=name,
        created_at=utcnow(),
        secret_hash=hash_secret(secret),
    )
    return NewKey(record, f"{TOKEN_PREFIX}_{key_id}_{secret}")


def parse_token(token: str) -> tuple[str, str]:
    """A token's id and secret.

    Raises:
        AuthenticationError: not a sagewai key (wrong shape); nothing is looked up.

    Example:
        >>> parse_token("sgw_0123456789ab_" + "x" * 43)[0]
        '0123456789ab'
    """
    prefix, _, rest = token.partition("_")
    key_id, _, secret = rest.partition("_")
    if prefix != TOKEN_PREFIX or not _ID.match(key_id) or not _SECRET.match(secret):
        raise AuthenticationError("the API key is malformed")
    return key_id, secret


def secret_matches(key: ApiKey, secret: str) -> bool:
    """Whether ``secret`` is the key's, compared in constant time."""
    return hmac.compare_digest(key.secret_hash, hash_secret(secret))
