"""A session's recent messages, windowed without ever splitting a tool call from its result.

Chat APIs refuse a ``tool`` message whose call is missing, and an assistant message whose tool
calls have no results. Trimming message by message would produce both. The history is therefore
kept as *blocks* that are removed whole: a user message, an assistant message with its tool calls
together with every result, a final assistant answer. Trimming drops the oldest blocks until the
window holds, then drops blocks until the history starts with a user message, so what the model
is shown is always a valid conversation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sagewai.errors import ConfigurationError

__all__ = ["ConversationHistory", "HistoryBlock", "tool_pairing_problems", "trim_blocks"]


@dataclass(frozen=True, slots=True)
class HistoryBlock:
    """Messages that must stay together (an assistant tool-call message and its results).

    ``message_id`` names the user or assistant turn the block holds (``None`` for tool
    exchanges): forgetting uses it to find the turns a fact came from.
    """

    messages: tuple[dict[str, Any], ...]
    message_id: str | None = None

    @property
    def starts_with_user(self) -> bool:
        """True for a block holding a user message."""
        return bool(self.messages) and self.messages[0].get("role") == "user"

    def text(self) -> str:
        """Every text of the block (contents and tool-call arguments), for redaction checks."""
        parts: list[str] = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                parts.append(str(function.get("arguments") or ""))
        return "\n".join(parts)


def trim_blocks(blocks: Sequence[HistoryBlock], window: int) -> list[HistoryBlock]:
    """The newest whole blocks holding at most ``window`` messages, starting with a user message.

    A block larger than the window is dropped with everything older than it.

    Example:
        >>> user = HistoryBlock(({"role": "user", "content": "hi"},))
        >>> answer = HistoryBlock(({"role": "assistant", "content": "hello"},))
        >>> [b.messages[0]["role"] for b in trim_blocks([user, answer, user, answer], 3)]
        ['user', 'assistant']
    """
    if window < 0:
        raise ConfigurationError("the history window must not be negative")
    kept: list[HistoryBlock] = []
    size = 0
    for block in reversed(blocks):
        if size + len(block.messages) > window:
            break
        kept.append(block)
        size += len(block.messages)
    kept.reverse()
    while kept and not kept[0].starts_with_user:
        kept.pop(0)
    return kept


def tool_pairing_problems(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """What is wrong with the tool calls of a message list (empty when nothing is).

    Every ``tool`` message must answer a call of the assistant message before it (with only
    tool messages in between), and every call must be answered before the next other message.

    Example:
        >>> tool_pairing_problems([{"role": "tool", "tool_call_id": "c1", "content": "x"}])
        ["tool result 'c1' at position 0 has no matching call"]
    """
    problems: list[str] = []
    open_calls: set[str] = set()
    in_exchange = False
    for position, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if not in_exchange or call_id not in open_calls:
                problems.append(
                    f"tool result {call_id!r} at position {position} has no matching call"
                )
            open_calls.discard(call_id)
            continue
        if open_calls:
            problems.append(f"tool call(s) {sorted(open_calls)} have no result")
        calls = message.get("tool_calls") or ()
        open_calls = {str(call.get("id")) for call in calls} if role == "assistant" else set()
        in_exchange = bool(open_calls)
    if open_calls:
        problems.append(f"tool call(s) {sorted(open_calls)} have no result")
    return problems


@dataclass(slots=True)
class ConversationHistory:
    """The windowed message history of one session.

    Args:
        window: Most messages shown to the model (whole blocks; 0 keeps no history).

    Example:
        >>> history = ConversationHistory(window=4)
        >>> history.add_user("I live in Porto", message_id="m1")
        >>> history.add_assistant("Noted!", message_id="m2")
        >>> [m["role"] for m in history.messages()]
        ['user', 'assistant']
    """

    window: int = 20
    _blocks: list[HistoryBlock] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.window < 0:
            raise ConfigurationError("the history window must not be negative")

    def add_user(self, content: str, *, message_id: str | None = None) -> None:
        """Append the user's message."""
        self._append(HistoryBlock(({"role": "user", "content": content},), message_id))

    def add_assistant(self, content: str, *, message_id: str | None = None) -> None:
        """Append the assistant's answer."""
        self._append(HistoryBlock(({"role": "assistant", "content": content},), message_id))

    def add_tool_exchange(
        self, assistant_message: Mapping[str, Any], results: Iterable[Mapping[str, Any]]
    ) -> None:
        """Append an assistant tool-call message together with every result."""
        self._append(HistoryBlock((dict(assistant_message), *(dict(r) for r in results))))

    def extend(self, blocks: Iterable[HistoryBlock]) -> None:
        """Append blocks (e.g. a whole turn), trimming once at the end."""
        self._blocks.extend(blocks)
        self._blocks = trim_blocks(self._blocks, self.window)

    def _append(self, block: HistoryBlock) -> None:
        self.extend([block])

    @property
    def blocks(self) -> list[HistoryBlock]:
        """The kept blocks, oldest first."""
        return list(self._blocks)

    def messages(self) -> list[dict[str, Any]]:
        """The kept messages, oldest first, as the model is shown them."""
        return [dict(message) for block in self._blocks for message in block.messages]

    def redact(self, should_remove: Callable[[HistoryBlock], bool]) -> int:
        """Remove the blocks ``should_remove`` selects (whole, so pairs stay intact).

        Returns:
            How many blocks were removed.
        """
        before = len(self._blocks)
        self._blocks = trim_blocks([b for b in self._blocks if not should_remove(b)], self.window)
        return before - len(self._blocks)

    def clear(self) -> None:
        """Forget every message of the session."""
        self._blocks.clear()
