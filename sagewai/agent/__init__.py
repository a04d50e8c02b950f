"""The agent: an LLM loop that recalls from memory before each answer and learns after it.

Example:
    >>> from sagewai.agent import UniversalAgent, tool
    >>> @tool
    ... def convert(amount: float, rate: float) -> float:
    ...     '''Convert an amount with an exchange rate.'''
    ...     return amount * rate
    >>> convert.schema()["function"]["name"]
    'convert'
"""

from sagewai.agent._agent import AgentForgetReport, AgentReply, UniversalAgent
from sagewai.agent._history import ConversationHistory, HistoryBlock, tool_pairing_problems
from sagewai.agent._loop import StreamingLLMClient
from sagewai.agent._memory_block import MemoryBlock, MemoryItem, estimate_tokens
from sagewai.agent._settings import AgentOptions, AgentSettings
from sagewai.agent._tools import Tool, ToolBox, ToolResult, tool

__all__ = [
    "AgentForgetReport",
    "AgentOptions",
    "AgentReply",
    "AgentSettings",
    "ConversationHistory",
    "HistoryBlock",
    "MemoryBlock",
    "MemoryItem",
    "StreamingLLMClient",
    "Tool",
    "ToolBox",
    "ToolResult",
    "UniversalAgent",
    "estimate_tokens",
    "tool",
    "tool_pairing_problems",
]
