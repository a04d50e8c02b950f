"""Acceptance 1 of issue 42 as a test: every statement of the profile benchmark is in front of
the model on each of ten later unrelated turns, within the section's budget, and a changed
instruction shows only its current form (the full run is ``python -m evals.profile_bench``)."""

from __future__ import annotations

from pathlib import Path

from evals import profile_bench as bench


async def test_every_statement_is_in_every_later_prompt_within_budget() -> None:
    assert len(bench.CASES) >= 40
    tallies = await bench.run_cases(later=10, profile_tokens=400, history=20, baseline=False)
    on = tallies["profile"].summary()
    assert on["later_turns"] == 10 * len(bench.CASES)
    assert on["in_prompt"] == 1.0, on["missed"]
    assert on["in_profile_section"] == 1.0
    assert on["section_over_budget"] == 0
    assert 0 < on["section_tokens_max"] <= 400


async def test_a_changed_instruction_shows_only_its_current_form() -> None:
    changes = await bench.run_changes(later=10, profile_tokens=400)
    assert changes["later_turns"] == 10 * len(bench.CHANGES)
    assert changes["current_form_shown"] == 1.0, changes["failures"]
    assert changes["old_form_shown"] == 0.0


async def test_a_tight_budget_keeps_the_section_within_it(tmp_path: Path) -> None:
    payload = await bench.main(
        [
            "--later",
            "1",
            "--profile-tokens",
            "45",
            "--history",
            "0",
            "--out",
            str(tmp_path / "b.json"),
        ]
    )
    assert payload["with_profile"]["section_over_budget"] == 0
    assert payload["with_profile"]["section_tokens_max"] <= 45
    assert (tmp_path / "b.json").exists()
