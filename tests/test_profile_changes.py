"""A changed instruction shows only its current form (issue 42, acceptance 1).

"Actually, you can deploy on Fridays now." lifts "Never deploy on Fridays.", "Stop citing
sources." lifts "Always cite your sources.", "I now prefer long answers." replaces "I prefer
short answers."; an instruction about something else lifts nothing
(:mod:`sagewai.core._standing_topics`). The sets of ``evals.profile_changes`` run here whole.
"""

from __future__ import annotations

import pytest

from evals.profile_changes import (
    DEV,
    HELD_OUT,
    UNRELATED,
    UNRELATED_HELD_OUT,
    run_changes,
    run_unrelated,
)
from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.core._standing_topics import ends_standing, same_topic, topic_words
from sagewai.extraction._instructions import is_instruction, read_instructions
from sagewai.intelligence import RuleBasedFactExtractor
from tests.helpers import engine_on_every_backend, every_backend  # noqa: F401

engine = engine_on_every_backend
"""In memory, the embedded folder and PostgreSQL (``tests.helpers``)."""


async def entries(ctx: ContextEngine, user: str = "dana") -> list[str]:
    return [e.content for e in await ctx.profile(user_id=user).entries()]


def test_the_sets_are_large_enough_and_distinct() -> None:
    assert len(DEV) >= 30
    assert len(HELD_OUT) >= 30
    assert len(UNRELATED) >= 30
    assert len(UNRELATED_HELD_OUT) >= 30
    seconds = {p.second for p in DEV}
    assert not seconds & {p.second for p in HELD_OUT}


async def test_dev_and_held_out_changes_show_only_the_current_form() -> None:
    dev, held_out = await run_changes(DEV), await run_changes(HELD_OUT)
    assert dev["entered"] == len(DEV)
    assert held_out["entered"] == len(HELD_OUT)
    # One dev miss is known: "Actually, give temperatures in Fahrenheit now." has no standing
    # marker, so it is not read as an instruction (docs/profile.md, Limits).
    assert dev["only_current_form"] >= 31 / 32, dev["failures"]
    assert held_out["only_current_form"] >= 0.9, held_out["failures"]


async def test_unrelated_instructions_are_never_lifted() -> None:
    for pairs in (UNRELATED, UNRELATED_HELD_OUT):
        result = await run_unrelated(pairs)
        assert result["entered"] == len(pairs)
        assert result["wrongly_lifted"] == 0, result["failures"]


async def test_a_release_lifts_the_rule_on_every_backend(engine: ContextEngine) -> None:
    bridge = MemoryBridge(
        context_engine=engine, fact_extractor=RuleBasedFactExtractor(), journal=False
    )
    await bridge.process_message(
        "Never deploy to production on Fridays.", session_id="s1", user_id="dana"
    )
    await bridge.process_message("Always cite your sources.", session_id="s1", user_id="dana")
    await bridge.process_message(
        "Thanks. Actually, you can deploy on Fridays now.", session_id="s2", user_id="dana"
    )
    shown = await entries(engine)
    assert "The user's standing instruction: You can deploy on Fridays now." in shown
    assert "The user's standing instruction: Always cite your sources." in shown
    assert not any("Never deploy" in text for text in shown)
    old = [
        f
        for f in await engine.list(user_id="dana", statuses=["superseded"])
        if "Never deploy" in f.content
    ]
    assert len(old) == 1
    assert old[0].superseded_by is not None
    # Reverted, the rule is back (the change is audited like every other).
    lifted = [c for c in await engine.history(old[0].id) if c.action.value == "superseded"]
    assert lifted
    assert lifted[-1].rule == "reconcile.change"
    await engine.revert(lifted[-1].id)
    assert any("Never deploy" in text for text in await entries(engine))
    # Another user's rule is not lifted by Dana's change.
    await bridge.process_message("Never deploy on Fridays.", session_id="e1", user_id="eve")
    await bridge.process_message(
        "You can deploy on Fridays again.", session_id="s3", user_id="dana"
    )
    assert any("Never deploy" in text for text in await entries(engine, "eve"))
    await bridge.aclose()


async def test_profile_set_lifts_a_rule_changed_in_other_words(engine: ContextEngine) -> None:
    dana = engine.profile(user_id="dana")
    await dana.set("Never deploy on Fridays.")
    await dana.set("Always use a formal tone.")
    await dana.set("Feel free to deploy on Fridays.")
    shown = await entries(engine)
    assert "Feel free to deploy on Fridays." in shown
    assert "Always use a formal tone." in shown
    assert "Never deploy on Fridays." not in shown


@pytest.mark.parametrize(
    ("said", "change", "replaces"),
    [
        ("Actually, you can deploy on Fridays now.", "actually", None),
        ("No need to end with a question anymore.", "anymore", None),
        ("Forget what I said about answering in French.", "forget", "answering in French"),
        ("Instead of bullet points, use numbered lists.", "instead", "bullet points"),
        ("I've changed my mind, always use emojis.", "changed", None),
        ("I changed my mind about meetings before 10am.", "changed", "meetings before 10am"),
        ("Okay, always deploy on Fridays now.", "now", None),
        ("From now on, use metric units.", None, None),
    ],
)
def test_changes_are_read_with_their_mark(
    said: str, change: str | None, replaces: str | None
) -> None:
    [fact] = read_instructions(said)
    assert fact.metadata.get("change") == change
    assert fact.metadata.get("replaces") == replaces


@pytest.mark.parametrize(
    "said",
    [
        "You can find the report in the shared drive.",  # no change said: not a rule
        "It's fine to be late sometimes, my boss says.",
        "Can you deploy on Fridays now?",
        "The weather is fine now.",
    ],
)
def test_permissions_without_a_change_or_questions_are_not_instructions(said: str) -> None:
    assert not is_instruction(said), said


def test_the_topic_rule() -> None:
    assert topic_words("Please don't use emojis in your replies.") == frozenset({"emoji"})
    assert same_topic("deploy on Fridays", "Never deploy to production on Fridays.")
    # An unrelated instruction brings words of its own: no lift.
    assert not same_topic("mention deadlines in emails", "Never mention the budget in emails.")
    assert not ends_standing("Always cite page numbers.", "Always cite your sources.")
    assert ends_standing("Stop citing sources.", "Always cite your sources.")
    assert ends_standing(
        "Use numbered lists.", "Always use bullet points.", changed=True, replaces="bullet points"
    )
