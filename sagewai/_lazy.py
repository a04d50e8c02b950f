"""Lazy package exports, written once: a package names its public classes without importing them.

A package ``__init__`` maps each public name to the module that defines it and installs the
module-level ``__getattr__`` / ``__dir__`` this returns. The defining module is imported on first
use, so importing a package stays fast and loads no optional or heavy library until asked.

Example:
    >>> getattr_, dir_ = lazy_exports("demo", {"sqrt": "math"}, ["sqrt"])
    >>> getattr_("sqrt")(9.0)
    3.0
    >>> dir_()
    ['sqrt']
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, names: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose public names load on first use.

    Args:
        package: The package's dotted name (for the error message and the cache).
        names: Public name -> dotted module that defines it.
        public: The package's ``__all__`` (what ``dir()`` lists beside its own globals).
    """

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        owner = sys.modules.get(package)
        if owner is not None:  # cache it: the next lookup is a plain attribute read
            setattr(owner, name, value)
        return value

    def __dir__() -> list[str]:
        owner = sys.modules.get(package)
        own = set(vars(owner)) if owner is not None else set()
        return sorted(own | set(public))

    return __getattr__, __dir__
