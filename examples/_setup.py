"""What every numbered example shares: where it writes, which model it talks to, the log format.

* Files go to a fresh temporary folder, deleted at the end, or under ``$SAGEWAI_EXAMPLES_DIR``
  (kept, so you can look at what an example wrote).
* A real model is used when ``SAGEWAI_MODEL`` is set (any litellm model string; add
  ``SAGEWAI_API_BASE`` for a local OpenAI-compatible server). Without it the examples say so and
  run on an offline scripted stand-in, so they work anywhere, with no key and no network.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sagewai.llm import LiteLLMClient, LLMClient

__all__ = ["chat_model", "example_folder", "show_logs"]


def show_logs() -> None:
    """Print sagewai's warnings (an offline fallback, say) the way an application would."""
    logging.basicConfig(level=logging.WARNING, format="  [log] %(levelname)s %(name)s: %(message)s")


@contextmanager
def example_folder(name: str) -> Iterator[Path]:
    """A folder for the example's stores: under $SAGEWAI_EXAMPLES_DIR if set, else temporary."""
    root = os.environ.get("SAGEWAI_EXAMPLES_DIR")
    if root:
        folder = Path(root) / name
        folder.mkdir(parents=True, exist_ok=True)
        print(f"writing under {folder} (SAGEWAI_EXAMPLES_DIR)")
        yield folder
        return
    with tempfile.TemporaryDirectory(prefix=f"sagewai-{name}-") as tmp:
        yield Path(tmp)


def chat_model(stand_in: LLMClient) -> LLMClient:
    """The model named by $SAGEWAI_MODEL, or ``stand_in`` (saying plainly that it is one)."""
    model = os.environ.get("SAGEWAI_MODEL")
    if model:
        api_base = os.environ.get("SAGEWAI_API_BASE") or None
        print(f"model: {model}" + (f" at {api_base}" if api_base else ""))
        return LiteLLMClient(model, api_base=api_base, timeout=120.0, max_tokens=400)
    print(
        "model: none configured (SAGEWAI_MODEL is not set), so this example runs on the offline "
        "scripted stand-in (sagewai.testing._llm.ScriptedLLM). Set SAGEWAI_MODEL, e.g. "
        "gpt-4o-mini, or openai/<alias> with SAGEWAI_API_BASE=http://127.0.0.1:8000/v1."
    )
    return stand_in
