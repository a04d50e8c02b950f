"""The public data sets the evaluations read, where to get each, and where each sits in a folder.

The data are never copied into this repository (their licences are for evaluation use). Put
them in one folder and pass it as ``--data DIR`` (or set ``SAGEWAI_EVAL_DATA``)::

    DIR/locomo/locomo10.json          (or locomo_dev.json, a 3-conversation split of it)
    DIR/beam/100K/<n>/chat.json and probing_questions.json
    DIR/longmemeval/longmemeval_s.json  (or longmemeval_m.json / longmemeval_oracle.json)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DATASETS", "DATA_ENV", "Dataset", "data_folder", "where_to_get"]

DATA_ENV = "SAGEWAI_EVAL_DATA"
"""The environment variable naming the data folder when ``--data`` is not given."""


@dataclass(frozen=True)
class Dataset:
    """One data set: its name, where to download it, and the paths tried under the folder."""

    name: str
    source: str
    paths: tuple[str, ...]

    def find(self, folder: Path) -> Path | None:
        """The first of this data set's paths that exists under ``folder`` (None if none).

        >>> DATASETS["locomo"].find(Path("no-such-folder")) is None
        True
        """
        for relative in self.paths:
            candidate = folder / relative
            if candidate.exists():
                return candidate
        return None


DATASETS: dict[str, Dataset] = {
    "locomo": Dataset(
        "locomo",
        "https://github.com/snap-research/locomo (data/locomo10.json; CC BY-NC 4.0)",
        ("locomo/locomo_dev.json", "locomo/locomo10.json", "locomo10.json"),
    ),
    "beam": Dataset(
        "beam",
        "https://github.com/mohammadtavakoli78/BEAM (chats/100K/<n>/chat.json and "
        "probing_questions/probing_questions.json, laid out as beam/100K/<n>/)",
        ("beam/100K",),
    ),
    "longmemeval": Dataset(
        "longmemeval",
        "https://github.com/xiaowu0162/LongMemEval (longmemeval_s.json from its Hugging Face "
        "data set xiaowu0162/longmemeval)",
        (
            "longmemeval/longmemeval_s.json",
            "longmemeval/longmemeval_m.json",
            "longmemeval/longmemeval_oracle.json",
            "longmemeval_s.json",
        ),
    ),
}
"""The conversational data sets the scoreboard knows, by name."""


def where_to_get(names: tuple[str, ...] = ("locomo", "beam", "longmemeval")) -> str:
    """One line saying where each data set comes from.

    >>> where_to_get(("locomo",))
    'LoCoMo: https://github.com/snap-research/locomo (data/locomo10.json; CC BY-NC 4.0)'
    """
    label = {"locomo": "LoCoMo", "beam": "BEAM", "longmemeval": "LongMemEval"}
    return "; ".join(f"{label[n]}: {DATASETS[n].source}" for n in names)


def data_folder(given: str | Path | None) -> Path | None:
    """``--data`` when given, else ``$SAGEWAI_EVAL_DATA``, else None."""
    if given:
        return Path(given)
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else None
