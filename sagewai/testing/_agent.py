"""Helpers for testing agents: read what the model was shown, and an offline stand-in model.

:class:`~sagewai.testing._llm.ScriptedLLM` records every call; the functions here read the
``<memory>`` block of a recorded call, so a test asserts on what was *recalled* rather than on
the whole prompt. :func:`echo_memory` is a script step that answers from that block, which lets
the examples (and your own demos) run a whole agent offline: it answers questions with the
remembered facts it finds relevant and calls ``forget_memory`` when asked to forget.

Example:
    >>> import asyncio
    >>> from sagewai.agent._memory_block import MemoryItem, render_memory_block
    >>> block = render_memory_block(
    ...     [MemoryItem("facts", "[m1] The user lives in Porto. (general; since 2024-05-01)")],
    ...     budget=200)
    >>> messages = [{"role": "system", "content": block.text},
    ...             {"role": "user", "content": "Where do I live?"}]
    >>> llm = offline_stand_in()
    >>> asyncio.run(llm.complete(messages)).content
    'From memory: The user lives in Porto.'
    >>> memory_lines(llm.calls[0].messages, "facts")
    ['[m1] The user lives in Porto. (general; since 2024-05-01)']
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sagewai.agent._memory_block import MEMORY_CLOSE, MEMORY_OPEN, SECTION_TITLES
from sagewai.core._text import keyword_terms
from sagewai.llm._base import LLMResponse, ToolCall
from sagewai.testing._llm import ScriptedLLM

__all__ = ["echo_memory", "memory_block", "memory_lines", "offline_stand_in"]

_FORGET = re.compile(r"\bforget\b", re.IGNORECASE)
_REF = re.compile(r"^\[(m\d+)\]\s*")
_IGNORED = frozenset(
    re.findall(
        r"\w+",
        "what which where when who whom how why is are was were do does did my me i you your the "
        "a an of to in on at for and or it this that please forget remember now still again about "
        "tell know",
    )
)


def memory_block(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text between ``<memory>`` and ``</memory>`` in the system messages ('' if none)."""
    for message in messages:
        content = message.get("content")
        if message.get("role") == "system" and isinstance(content, str):
            start = content.find(MEMORY_OPEN)
            end = content.find(MEMORY_CLOSE, start + 1)
            if start != -1 and end != -1:
                return content[start + len(MEMORY_OPEN) : end].strip()
    return ""


def memory_lines(messages: Sequence[Mapping[str, Any]], section: str) -> list[str]:
    """The lines of one section (``"facts"``, ``"graph"`` or ``"episodes"``) of the block."""
    title = SECTION_TITLES[section]
    lines: list[str] = []
    inside = False
    for line in memory_block(messages).splitlines():
        if line in SECTION_TITLES.values():
            inside = line == title
        elif inside and line.startswith("- "):
            lines.append(line[2:])
    return lines


def _words(text: str) -> set[str]:
    return {w.rstrip("s") for w in keyword_terms(text.lower()) if w not in _IGNORED}


def _split_fact(line: str) -> tuple[str | None, str, str]:
    """``(ref, content, notes)`` of a fact line ``[m1] content (notes)``."""
    match = _REF.match(line)
    ref = match.group(1) if match else None
    body = line[match.end() :] if match else line
    content, _, notes = body.rpartition(" (")
    if not content:
        return ref, body, ""
    return ref, content, notes.rstrip(")")


def _last(messages: Sequence[Mapping[str, Any]], role: str) -> Mapping[str, Any] | None:
    return next((m for m in reversed(messages) if m.get("role") == role), None)


def echo_memory(messages: list[dict[str, Any]]) -> LLMResponse:
    """A script step answering from the memory block, for offline demos.

    * after a tool result: confirms it (``Done: forgot 1 fact(s).``);
    * a message asking to forget: calls ``forget_memory`` with the facts sharing its words;
    * a question: answers with the remembered facts sharing its words (and what they replaced);
    * anything else: acknowledges it.
    """
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return LLMResponse(content=f"Done: {str(last.get('content') or '').strip()}.")
    user = _last(messages, "user")
    text = str(user.get("content") or "") if user else ""
    asked = _words(text)
    facts = [_split_fact(line) for line in memory_lines(messages, "facts")]
    relevant = [(ref, content, notes) for ref, content, notes in facts if asked & _words(content)]
    if _FORGET.search(text):
        refs = [ref for ref, _, _ in relevant if ref]
        if refs:
            call = ToolCall(
                id="call_forget", name="forget_memory", arguments=json.dumps({"memory_ids": refs})
            )
            return LLMResponse(content=None, tool_calls=[call], finish_reason="tool_calls")
        return LLMResponse(content="I have nothing like that in memory.")
    if text.rstrip().endswith("?"):
        if not relevant:
            return LLMResponse(content="I don't know that yet.")
        answers = []
        for _, content, notes in relevant[:2]:
            before = notes.split("was: ", 1)[1].split(" until ")[0] if "was: " in notes else ""
            answers.append(f"{content} (It used to be: {before})" if before else content)
        return LLMResponse(content="From memory: " + " ".join(answers))
    return LLMResponse(content="Got it.")


def offline_stand_in(turns: int = 500) -> ScriptedLLM:
    """A :class:`ScriptedLLM` answering every call with :func:`echo_memory` (``turns`` calls)."""
    return ScriptedLLM([echo_memory] * turns)
