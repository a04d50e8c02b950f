"""The README's two commands stay true and CI runs the README's test command verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text)


def test_readme_opens_with_the_two_commands() -> None:
    commands = _readme_commands()
    assert len(commands) >= 2
    main_job, tests = commands[0], commands[1]
    assert "sagewai demo" in main_job
    assert "pytest" in tests


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _readme_commands()[1] in ci.splitlines()
