"""A scripted CrewAI model: CrewAI agents and memory run offline, answering from a function.

CrewAI calls its model for an agent's steps and, in its unified ``Memory``, for analysis with a
pydantic ``response_model`` (what to remember, which scope, how to consolidate). A test answers
each call from one function of the messages and the requested model, so a real ``Crew`` with a
real ``Memory`` runs with no network and no key.

Needs the ``crewai`` extra.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import PrivateAttr

from sagewai.errors import MissingDependencyError

try:
    from crewai.llms.base_llm import BaseLLM
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependencyError("crewai", "crewai", "sagewai.testing.ScriptedCrewLLM") from exc

__all__ = ["ScriptedCrewLLM"]

CrewResponder = Callable[[list[dict[str, Any]], "type | None"], Any]


class ScriptedCrewLLM(BaseLLM):
    """A CrewAI ``BaseLLM`` whose answers come from ``responder(messages, response_model)``.

    The responder returns text (an agent step: ``"Final Answer: ..."``) or, when CrewAI asks
    for a ``response_model``, an instance of it. Every call is kept in :attr:`calls`.

    Example:
        >>> llm = ScriptedCrewLLM(lambda messages, model: "Final Answer: 42")
        >>> llm.call("What is six times seven?")
        'Final Answer: 42'
        >>> llm.calls[0][0]["content"]
        'What is six times seven?'
    """

    model: str = "scripted"
    _responder: CrewResponder = PrivateAttr()
    _calls: list[list[dict[str, Any]]] = PrivateAttr(default_factory=list)

    def __init__(self, responder: CrewResponder, **settings: Any) -> None:
        super().__init__(model="scripted", **settings)
        self._responder = responder

    @property
    def calls(self) -> list[list[dict[str, Any]]]:
        """The messages of every call, oldest first."""
        return self._calls

    def call(
        self,
        messages: Any,
        tools: Any = None,
        callbacks: Any = None,
        available_functions: Any = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: Any = None,
    ) -> Any:
        shown = [{"role": "user", "content": messages}] if isinstance(messages, str) else messages
        shown = [dict(m) for m in shown]
        self._calls.append(shown)
        return self._responder(shown, response_model)

    def supports_function_calling(self) -> bool:
        return True

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 128_000
