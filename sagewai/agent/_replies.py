"""What the agent says when no model answered: plainly why, and what memory holds."""

from __future__ import annotations

from dataclasses import dataclass, field

from sagewai.agent._memory_block import FACTS, MemoryBlock
from sagewai.agent._profile_section import ProfileSection
from sagewai.agent._tools import ToolResult
from sagewai.llm._base import Usage
from sagewai.llm._errors import is_model_unreachable

__all__ = ["EMPTY_ANSWER", "AgentReply", "describe_error", "failure_reply"]

EMPTY_ANSWER = "I could not produce an answer this time. Could you rephrase?"


@dataclass(frozen=True, slots=True)
class AgentReply:
    """One turn's answer with what led to it (what :meth:`UniversalAgent.respond` returns)."""

    answer: str
    session_id: str
    user_id: str | None
    memory: MemoryBlock
    """The recalled-memory block the model was shown."""
    profile: ProfileSection = field(default_factory=lambda: ProfileSection("", 0))
    """The standing profile section the model was shown."""
    steps: int = 0
    tool_results: tuple[ToolResult, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model_error: str | None = None
    """Why no model answered (the reply then explains it); ``None`` when one did."""
    offline: bool = False
    """True when no model is reachable here (no key, no server, model calls switched off)."""
    reached_step_cap: bool = False


def describe_error(error: BaseException) -> str:
    """``ErrorClass: first line of the message`` (at most 200 characters of it).

    Example:
        >>> describe_error(TimeoutError("no answer in 30 s\\nmore"))
        'TimeoutError: no answer in 30 s'
    """
    text = str(error).strip()
    first = text.splitlines()[0][:200] if text else ""
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


SAVED = "I saved your message to memory."
NOT_SAVED = "Your message is kept for this session only (this memory is not saved to disk)."


def failure_reply(error: BaseException, block: MemoryBlock, *, saved: bool = False) -> str:
    """The reply of a turn whose model call failed, listing the facts recalled for it.

    ``saved`` says whether the message is durable (journaled or stored on disk): only then does
    the reply claim it was saved.

    Example:
        >>> from sagewai.llm import ModelNotConfiguredError
        >>> failure_reply(ModelNotConfiguredError("no API key"), MemoryBlock("", 0))[:44]
        "I can't reach a language model right now, so"
    """
    reason = describe_error(error)
    kept = SAVED if saved else NOT_SAVED
    if is_model_unreachable(error):
        opening = (
            "I can't reach a language model right now, so I can't compose an answer "
            f"({reason}). {kept}"
        )
    else:
        opening = f"The language model failed to answer ({reason}); please try again. {kept}"
    remembered = [item.text for item in block.items if item.section == FACTS]
    if not remembered:
        return f"{opening} I have nothing stored that matches your message."
    lines = "\n".join(f"- {line.split('] ', 1)[-1]}" for line in remembered)
    return f"{opening} What I remember that may help:\n{lines}"
