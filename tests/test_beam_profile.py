"""The BEAM instruction/preference benchmark's own logic, on a small hand-made conversation
(BEAM is never copied here): an instruction said early is in the prompt of a later question
only with the profile."""

from __future__ import annotations

import json
from pathlib import Path

from evals import beam_profile as bench


def write_conversation(root: Path) -> Path:
    folder = root / "11"
    folder.mkdir(parents=True)
    filler = [
        [
            {"role": "user", "id": 2 * i + 4, "content": f"Tell me about topic {i} of botany."},
            {"role": "assistant", "id": 2 * i + 5, "content": f"Topic {i}: leaves and roots."},
        ]
        for i in range(30)
    ]
    turns = [
        [
            {
                "role": "user",
                "id": 0,
                "time_anchor": "March-15-2024",
                "content": "Always include version numbers when I ask about libraries. ->-> 1,2",
            },
            {"role": "assistant", "id": 1, "content": "Sure, I will."},
        ],
        [
            {
                "role": "user",
                "id": 2,
                "content": "It must stay small, so I prefer minimal dependencies, can you help?",
            },
            {"role": "assistant", "id": 3, "content": "Yes."},
        ],
        *filler,
    ]
    chat = [{"batch_number": 1, "time_anchor": None, "turns": turns}]
    questions = {
        "instruction_following": [
            {"question": "Which packages does a web scraper use?", "source_chat_ids": [0]}
        ],
        "preference_following": [
            {"question": "How should I add charts to my app?", "source_chat_ids": [2]}
        ],
        "information_extraction": [{"question": "Topic 3?", "source_chat_ids": [10]}],
    }
    (folder / "chat.json").write_text(json.dumps(chat), encoding="utf-8")
    (folder / "probing_questions.json").write_text(json.dumps(questions), encoding="utf-8")
    return root


async def test_the_profile_puts_the_statements_in_the_prompt(tmp_path: Path) -> None:
    root = write_conversation(tmp_path)
    out = tmp_path / "beam_profile.json"
    payload = await bench.main(
        ["--data", str(root), "--embedder", "fake", "--memory-tokens", "60", "--out", str(out)]
    )
    split = payload["splits"]["held_out"]
    assert split["with_profile"]["questions"] == 2  # the other categories are not asked
    assert split["with_profile"]["evidence_in_prompt_all"] == 1.0
    assert split["with_profile"]["statement_in_prompt"] == 1.0
    assert split["with_profile"]["statement_in_profile"] == 1.0  # recognised, whatever is shown
    assert split["memory_block_only"]["statement_in_profile"] == 1.0
    assert split["memory_block_only"]["evidence_in_prompt_all"] < 1.0
    assert json.loads(out.read_text())["conversations"] == ["11"]
