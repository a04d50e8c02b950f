"""sagewai's warnings name their level and source when the application configured no logging
(issue 39); once it has, they print its way, once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _stderr(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stderr


def test_a_warning_names_its_level_and_logger_when_nothing_is_configured() -> None:
    err = _stderr(
        "import logging, sagewai\n"
        "logging.getLogger('sagewai.context.bridge').warning('the model is not reachable')\n"
        "logging.getLogger('sagewai.context.bridge').info('an info line stays quiet')\n"
    )
    assert err == "WARNING sagewai.context.bridge: the model is not reachable\n"


def test_the_applications_logging_prints_sagewais_records_once_its_way() -> None:
    err = _stderr(
        "import logging, sagewai\n"
        "logging.basicConfig(format='APP %(levelname)s %(message)s')\n"
        "logging.getLogger('sagewai.stores').warning('slow disk')\n"
    )
    assert err == "APP WARNING slow disk\n"
    err = _stderr(
        "import logging, sys, sagewai\n"
        "mine = logging.StreamHandler(sys.stderr)\n"
        "mine.setFormatter(logging.Formatter('MINE %(message)s'))\n"
        "logging.getLogger('sagewai').addHandler(mine)\n"
        "logging.getLogger('sagewai.stores').warning('slow disk')\n"
    )
    assert err == "MINE slow disk\n"


def test_importing_sagewai_configures_no_logging_of_the_application() -> None:
    err = _stderr(
        "import logging, sagewai, importlib\n"
        "importlib.reload(sagewai)\n"
        "assert logging.getLogger().handlers == []\n"
        "assert len(logging.getLogger('sagewai').handlers) == 1\n"
        "logging.getLogger('other.library').warning('not ours')\n"
    )
    assert err == "not ours\n"  # another library's warning keeps Python's own behaviour
