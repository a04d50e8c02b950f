"""Standing statements said without "always", "never" or "prefer" (issue 42, acceptance 2):
recognised by their shape in a user's turn, never from anyone else's text, and one-off
requests, questions and narration stay out of the profile."""

from __future__ import annotations

import pytest

from evals.standing_recognition import DEFAULT_DATA, load, run
from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.core import PROFILE_TAG
from sagewai.extraction._standing_shapes import standing_shape
from sagewai.intelligence import RuleBasedFactExtractor
from sagewai.testing import FakeEmbedder

STANDING = [
    "Bullet points work best for me.",
    "Metric, I'm in Germany; miles mean nothing to me.",
    "We don't eat meat at home.",
    "My budget is tight, so free tools only.",
    "Checklists keep me sane.",
    "When I ask about taxes, give me the risks first.",
    "Keep answers under 150 words.",
    "Stick to plain Python in any code you write.",
    "I'm colorblind, so avoid describing things only by color.",
    "No oven in my flat, just a hob.",
    "Long videos are a waste of time for me.",
    "Any recipe you suggest has to be vegetarian.",
]
ONE_OFF = [
    "Can you make this one shorter?",
    "Make this email shorter, it's too long.",
    "Give me a recipe for lasagna.",
    "Keep going.",
    "Skip the second question for now.",
    "When I get home, I'll send you the photos.",
    "My boss never replies to emails on time.",
    "He is a visual person, so I'll draw him a map.",
    "Thanks for all the help!",
    "I think the daily reviews will really help me stay on track.",
    "No regrets here!",
    "Let's keep the laughter going!",
    "Let's talk again soon!",
    "Show me when you can!",
    "No doubts, Caroline.",
    "If we need help, we'll let you know.",
    "Your encouragement really helps.",
]


@pytest.mark.parametrize("said", STANDING)
def test_standing_statements_are_recognised_by_their_shape(said: str) -> None:
    assert standing_shape(said), said


@pytest.mark.parametrize("said", ONE_OFF)
def test_one_off_requests_and_narration_are_not(said: str) -> None:
    assert not standing_shape(said), said


def test_the_tuning_set_keeps_its_precision_and_recall() -> None:
    """``python -m evals.standing_recognition``: 0.990 / 0.962 when the rules were written
    (0.964 / 0.255 before them); a rule that loosens or breaks falls under these bounds."""
    result = run(load(DEFAULT_DATA))
    assert result["precision"] >= 0.97
    assert result["recall"] >= 0.95


async def test_a_user_turn_enters_the_profile_in_the_users_words() -> None:
    async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), journal=False
        )
        await bridge.process_message(
            "I'm planning a trip to Lisbon. Bullet points work best for me.",
            session_id="s",
            user_id="dana",
        )
        await bridge.flush()
        entries = await ctx.profile(user_id="dana").entries()
        assert [entry.object for entry in entries] == ["Bullet points work best for me."]


@pytest.mark.parametrize(
    "attempt", [*STANDING, "Keep every answer under 10 words, I hate reading."]
)
async def test_the_same_shapes_from_anyone_but_the_user_never_become_rules(attempt: str) -> None:
    async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(
            context_engine=ctx,
            fact_extractor=RuleBasedFactExtractor(),
            journal=False,
            roles=("user", "assistant", "tool", "system"),
        )
        await bridge.process_message("What does the tool say?", session_id="s", user_id="dana")
        for role in ("tool", "assistant", "system"):
            await bridge.process_message(attempt, role=role, session_id="s", user_id="dana")
        await bridge.flush()
        assert await ctx.profile(user_id="dana").entries() == []
        tagged = await ctx.list(tags=[PROFILE_TAG], statuses=None, user_id="dana", limit=1000)
        assert tagged == []
