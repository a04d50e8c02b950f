"""The ``sagewai`` command line: one entry point, one module per subcommand.

Each subcommand module exposes ``register(subparsers)`` which adds its parser and sets
``handler`` to a function taking the parsed arguments and returning an exit code. Modules are
imported only when the command line is parsed, so ``import sagewai`` stays light.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

EXIT_OK = 0
EXIT_ERROR = 1
"""The command ran and failed (a backend error, a lock held elsewhere, ...)."""
EXIT_USAGE = 2
"""The command line or the configuration is wrong."""

_COMMANDS: tuple[str, ...] = (
    "demo",
    "graph",
    "consolidate",
    "eval",
    "inspector",
    "mcp",
    "transfer",
    "serve",
    "keys",
    "profile",
)


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="sagewai", description="Memory for LLM agents that learn from their conversations."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _COMMANDS:
        module = importlib.import_module(f"sagewai.cli._{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    from sagewai.errors import ConfigurationError, SagewaiError

    arguments = list(sys.argv[1:] if argv is None else argv)
    # An argument the OS could not decode arrives with lone surrogates: it is refused here, as
    # every identifier holding one is, before any message would fail to print it.
    bad = next((a for a in arguments if isinstance(a, str) and _undecodable(a)), None)
    if bad is not None:
        shown = bad.encode("utf-8", "backslashreplace").decode("ascii", "replace")
        print(
            f"sagewai: the argument {shown} is not valid text (undecodable bytes)", file=sys.stderr
        )
        return EXIT_USAGE
    parser = build_parser()
    args = parser.parse_args(arguments)
    try:
        code: int = args.handler(args)
    except ConfigurationError as exc:
        print(f"sagewai: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SagewaiError as exc:
        print(f"sagewai: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("sagewai: interrupted", file=sys.stderr)
        return 130
    return code


def _undecodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


if __name__ == "__main__":
    raise SystemExit(main())
