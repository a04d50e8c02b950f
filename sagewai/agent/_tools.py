"""Tools an agent's model may call: plain Python callables described by their type hints.

A user writes an ordinary function with type hints and a Google-style docstring; :class:`Tool`
turns it into the JSON schema a chat model reads (through a pydantic model of its parameters)
and, when the model calls it, validates the arguments against the same model before the function
runs. :class:`ToolBox` runs the calls a model asked for and never lets one of them end the turn:
malformed JSON, an unknown tool, invalid arguments, a tool that raises or hangs, each becomes an
error message returned to the model as the tool's result, so the model can correct itself.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import re
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from sagewai.errors import ConfigurationError
from sagewai.llm._base import ToolCall

__all__ = ["MAX_TOOL_RESULT_CHARS", "Tool", "ToolBox", "ToolResult", "tool"]

logger = logging.getLogger("sagewai.agent")

MAX_TOOL_RESULT_CHARS = 8_000
"""A tool result longer than this is cut (with a note) before the model sees it."""

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Yields|Raises|Examples?|Notes?):")
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _docstring_parts(function: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The summary of a Google-style docstring and the descriptions of its ``Args:``."""
    doc = inspect.getdoc(function) or ""
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    summary_done = False
    for line in doc.splitlines():
        stripped = line.strip()
        header = _SECTION.match(stripped)
        if header and not line.startswith(" "):
            section, current = header.group(1), None
            continue
        if section is None:
            if stripped and not summary_done:
                summary.append(stripped)
            elif summary:
                summary_done = True  # the summary is the first paragraph: what the tool does
            continue
        if section not in ("Args", "Arguments", "Parameters") or not stripped:
            continue
        match = _ARG_LINE.match(stripped)
        indent = len(line) - len(line.lstrip())
        if match and (current is None or indent <= 4):
            current = match.group(1).lstrip("*")
            params[current] = match.group(2).strip()
        elif current is not None:
            params[current] = f"{params[current]} {stripped}".strip()
    return " ".join(summary), params


def _parameters_model(
    function: Callable[..., Any], name: str, descriptions: Mapping[str, str]
) -> type[BaseModel]:
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function)
    except (NameError, TypeError) as exc:
        raise ConfigurationError(f"tool {name!r}: cannot resolve its type hints: {exc}") from exc
    fields: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ConfigurationError(
                f"tool {name!r}: *args and **kwargs cannot be described to a model; "
                "name every parameter"
            )
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise ConfigurationError(f"tool {name!r}: positional-only parameters are not supported")
        if parameter.name not in hints:
            raise ConfigurationError(
                f"tool {name!r}: parameter {parameter.name!r} needs a type hint (the model is "
                "shown the JSON schema made from the hints)"
            )
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[parameter.name] = (
            hints[parameter.name],
            Field(default, description=descriptions.get(parameter.name) or None),
        )
    model_name = "".join(part.capitalize() for part in re.split(r"[_-]", name) if part) or "Tool"
    return create_model(f"{model_name}Arguments", __config__=ConfigDict(extra="forbid"), **fields)


@dataclass(frozen=True, slots=True)
class Tool:
    """A callable the model may use, with the JSON schema it is shown.

    Build one with :meth:`Tool.from_function` (or the :func:`tool` decorator); plain functions
    given to :class:`~sagewai.agent.UniversalAgent` are converted for you.

    Example:
        >>> def get_weather(city: str, unit: str = "celsius") -> str:
        ...     '''Today's weather in a city.
        ...
        ...     Args:
        ...         city: The city name, e.g. "Lisbon".
        ...         unit: "celsius" or "fahrenheit".
        ...     '''
        ...     return f"Sunny in {city}"
        >>> weather = Tool.from_function(get_weather)
        >>> weather.name, weather.description
        ('get_weather', "Today's weather in a city.")
        >>> weather.parameters["required"], weather.parameters["properties"]["city"]["type"]
        (['city'], 'string')
    """

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    arguments_model: type[BaseModel] = field(repr=False)

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> Tool:
        """Describe ``function`` (sync or async) as a tool from its signature and docstring.

        Raises:
            ConfigurationError: a parameter without a type hint, ``*args``/``**kwargs``, or a
                name a model API would refuse.
        """
        if not callable(function):
            raise ConfigurationError(f"a tool must be callable, got {type(function).__name__}")
        tool_name = str(name or getattr(function, "__name__", ""))
        if not _NAME.match(tool_name):
            raise ConfigurationError(
                f"tool name {tool_name!r} must be 1-64 letters, digits, '_' or '-'"
            )
        summary, params = _docstring_parts(function)
        model = _parameters_model(function, tool_name, params)
        schema = model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        schema.setdefault("properties", {})
        return cls(
            name=tool_name,
            description=description or summary or f"The {tool_name} tool.",
            parameters=schema,
            function=function,
            arguments_model=model,
        )

    def schema(self) -> dict[str, Any]:
        """The OpenAI-format tool definition (litellm accepts it for every provider)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        """Validate ``arguments`` and call the function (a sync one in a worker thread).

        Raises:
            ValidationError: the arguments do not match the parameters.
        """
        validated = self.arguments_model.model_validate(dict(arguments))
        kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
        if inspect.iscoroutinefunction(self.function):
            result = await self.function(**kwargs)
        else:
            result = await asyncio.to_thread(self.function, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result


def tool(
    function: Callable[..., Any] | None = None, *, name: str | None = None
) -> Any:  # Tool, or a decorator making one
    """Decorator form of :meth:`Tool.from_function`: ``@tool`` or ``@tool(name="...")``.

    Example:
        >>> @tool
        ... async def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> add.name, sorted(add.parameters["properties"])
        ('add', ['a', 'b'])
    """
    if function is None:
        return lambda inner: Tool.from_function(inner, name=name)
    return Tool.from_function(function, name=name)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What one tool call gave back to the model; ``error`` is set when it failed."""

    call: ToolCall
    content: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the tool ran and returned normally."""
        return self.error is None

    def message(self) -> dict[str, Any]:
        """The ``tool`` chat message answering the call."""
        return {
            "role": "tool",
            "tool_call_id": self.call.id,
            "name": self.call.name,
            "content": self.content,
        }


def render_result(value: Any, *, limit: int = MAX_TOOL_RESULT_CHARS) -> str:
    """A tool's return value as the text the model reads (JSON for structured values)."""
    if value is None:
        text = "done"
    elif isinstance(value, str):
        text = value
    elif isinstance(value, BaseModel):
        text = value.model_dump_json()
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(value)
    if len(text) > limit:
        text = text[:limit] + f"\n[... cut: the result had {len(text)} characters]"
    return text


class ToolBox:
    """The tools of one turn, by name, and the one place their calls are run.

    Args:
        tools: Tools or plain callables (converted with :meth:`Tool.from_function`).
        timeout: Seconds one call may take before the model is told it timed out.

    Raises:
        ConfigurationError: two tools share a name.
    """

    def __init__(
        self, tools: Iterable[Tool | Callable[..., Any]] = (), *, timeout: float = 30.0
    ) -> None:
        self._tools: dict[str, Tool] = {}
        self.timeout = timeout
        for item in tools:
            converted = item if isinstance(item, Tool) else Tool.from_function(item)
            if converted.name in self._tools:
                raise ConfigurationError(f"two tools are named {converted.name!r}")
            self._tools[converted.name] = converted

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        """The tool names, in the order they were given."""
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """The definitions sent with each model call."""
        return [t.schema() for t in self._tools.values()]

    async def run(self, call: ToolCall) -> ToolResult:
        """Run one call; every failure becomes an error result the model can read."""
        chosen = self._tools.get(call.name)
        if chosen is None:
            available = ", ".join(self._tools) or "none"
            return _error(call, f"there is no tool named {call.name!r}; available: {available}")
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else {}
        except ValueError as exc:
            return _error(
                call,
                f"the arguments of {call.name} are not valid JSON ({exc}); call it again with "
                "one JSON object matching its parameters",
            )
        if not isinstance(arguments, dict):
            return _error(call, f"the arguments of {call.name} must be a JSON object")
        try:
            async with asyncio.timeout(self.timeout):
                value = await chosen.invoke(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors()
            )
            return _error(call, f"invalid arguments for {call.name}: {problems}")
        except TimeoutError:
            return _error(call, f"{call.name} did not finish within {self.timeout:g} s")
        except Exception as exc:
            logger.warning("tool %s failed: %r", call.name, exc, exc_info=True)
            return _error(call, f"{call.name} failed: {type(exc).__name__}: {exc}")
        return ToolResult(call=call, content=render_result(value))

    async def run_all(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run the calls of one step in order (a later call may depend on an earlier one)."""
        return [await self.run(call) for call in calls]


def _error(call: ToolCall, message: str) -> ToolResult:
    return ToolResult(call=call, content=f"error: {message}", error=message)
