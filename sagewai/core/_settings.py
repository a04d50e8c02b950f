"""Settings: the base of every ``XSettings`` object (one configuration convention).

Every configurable part is built the same way: ``X(required, *, settings=XSettings(...),
collaborators...)``. The settings object is a frozen, validated pydantic model whose fields are
documented one by one; a bad value fails when the settings are made, with an
:class:`~sagewai.errors.InvalidInputError` (a :class:`~sagewai.errors.ConfigurationError`; a
:class:`~sagewai.errors.ScopeError` for a scope), never half-way through a conversation.
"""

from __future__ import annotations

import types
from typing import Any, ClassVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from sagewai.errors import InvalidInputError, ScopeError

__all__ = ["Settings", "settings_error"]


def settings_error(kind: str, exc: ValidationError) -> InvalidInputError:
    """The typed error for invalid settings: a :class:`ScopeError` when a scope field is wrong.

    Example:
        >>> from pydantic import BaseModel
        >>> class S(BaseModel):
        ...     scope: int
        >>> try:
        ...     S(scope="x")
        ... except ValidationError as exc:
        ...     type(settings_error("demo", exc)).__name__
        'ScopeError'
    """
    fields = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
    details = "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'settings'}: {error['msg']}"
        for error in exc.errors()
    )
    error_type = ScopeError if "scope" in fields else InvalidInputError
    return error_type(f"invalid {kind} settings: {details}")


class Settings(BaseModel):
    """A frozen, validated set of a part's tunable values (see the module).

    Subclasses name themselves in ``kind`` (for the error message) and declare their fields.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: ClassVar[str] = "the"

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise settings_error(self.kind, exc) from exc

    @model_validator(mode="before")
    @classmethod
    def _numbers_are_numbers(cls, data: Any) -> Any:
        # pydantic reads "10" and True as numbers; a setting given as text or a flag is a
        # mistake to report, not to guess at (batch_size="10" would hide a config-file typo).
        if not isinstance(data, dict):
            return data
        for name, value in data.items():
            field = cls.model_fields.get(name)
            if field is None or not _is_number_type(field.annotation):
                continue
            if isinstance(value, str | bytes | bool):
                raise ValueError(f"{name} must be a number, got {type(value).__name__}")
        return data


def _is_number_type(annotation: Any) -> bool:
    """Whether a field's type is ``int`` or ``float`` (or one of them or ``None``)."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [arg for arg in get_args(annotation) if arg is not type(None)]
        return bool(args) and all(arg in (int, float) for arg in args)
    return annotation in (int, float)
