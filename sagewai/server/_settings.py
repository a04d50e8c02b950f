"""How a memory server behaves: rate limits, CORS, the key cache, request sizes, the dashboard."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ServerSettings"]


class ServerSettings(BaseModel):
    """Settings of :func:`~sagewai.server.create_app` (``sagewai serve`` sets them from flags).

    Example:
        >>> ServerSettings(cors_origins=("https://app.example.com",)).rate_limit
        20.0
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate_limit: float = Field(default=20.0, ge=0.0)
    """Requests per second each API key may sustain (0: no limit)."""
    rate_burst: int = Field(default=60, ge=1)
    """Requests a key may send at once after a quiet time."""
    cors_origins: tuple[str, ...] = ()
    """Origins a browser may call the API from (none by default: CORS is off)."""
    key_cache_seconds: float = Field(default=2.0, ge=0.0)
    """How long a looked-up key is trusted before it is read again: a revoked key is refused
    within this time."""
    max_body_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
    """Largest request body accepted (413 above)."""
    dashboard: bool = True
    """Serve the dashboard at ``/``."""
