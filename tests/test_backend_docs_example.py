"""The "write your own backend" example in docs/backends.md runs, and passes the whole suite."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _example() -> str:
    text = (ROOT / "docs" / "backends.md").read_text(encoding="utf-8")
    section = text.split("## Write your own backend", 1)[1]
    blocks = re.findall(r"```python\n(.+?)\n```", section, flags=re.S)
    assert len(blocks) == 1, "the section holds one complete test file"
    return blocks[0] + "\n"


def test_the_custom_backend_example_passes_the_vector_suite(tmp_path: Path) -> None:
    (tmp_path / "test_dict_vector_store.py").write_text(_example(), encoding="utf-8")
    # A user's own pytest run: strict asyncio mode, no sagewai conftest, no plugins of ours.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_mode=strict",
            "-W",
            "error::pytest.PytestUnraisableExceptionWarning",
            "test_dict_vector_store.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary = result.stdout.strip().splitlines()[-1]
    passed = int(re.search(r"(\d+) passed", summary).group(1))  # type: ignore[union-attr]
    assert passed >= 40, summary
    assert "failed" not in summary, summary
    assert "error" not in summary, summary
