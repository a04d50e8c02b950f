"""Lazy imports of optional dependencies with the exact install command in the error."""

from __future__ import annotations

import importlib
from types import ModuleType

from sagewai.errors import MissingDependencyError

__all__ = ["require"]


def require(module: str, *, extra: str, feature: str, package: str | None = None) -> ModuleType:
    """Import ``module``, or raise :class:`MissingDependencyError` with the pip command to run.

    Args:
        module: The dotted module name to import.
        extra: The sagewai extra that installs it.
        feature: What the caller was trying to use, for the message.
        package: The PyPI distribution name when it differs from ``module``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(package or module, extra, feature) from exc
