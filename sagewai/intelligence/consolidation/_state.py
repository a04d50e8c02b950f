"""What a consolidation run leaves behind between runs: a checkpoint and an incremental marker.

Why: a run over a million facts can be killed half-way (a deploy, an OOM, a timeout). Each batch
is committed on its own, and after each one the run records how far it got; the next run resumes
from there with the same reference time, so the final state is the one an uninterrupted run would
have reached. The start time of the last completed run is the marker an incremental run reads to
process only the facts written since: the time of the run's last (empty) page read, which
comes after every batch it committed, so its own writes are not examined again.

The state is one small JSON value per project and selection, kept with
``MetadataStore.get_state`` / ``set_state``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from pydantic import JsonValue

__all__ = ["ConsolidationState", "RunCheckpoint", "state_key"]

_VERSION = 1


def state_key(selector: str) -> str:
    """The ``get_state`` key of a selection (scope, identifiers, tags)."""
    return "consolidation/" + hashlib.sha256(selector.encode()).hexdigest()[:24]


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


@dataclass(frozen=True, slots=True)
class RunCheckpoint:
    """How far an unfinished run got.

    Attributes:
        run_id: The run that wrote it.
        started_at: When the run (or the first run of a resumed chain) started.
        reference_time: The time decay is computed at; a resumed run keeps it.
        fingerprint: The deciding settings; a run under other settings starts afresh.
        incremental: Whether the run was incremental.
        since: The incremental lower bound on write times, if any.
        cursor: The ``(created_at, id)`` of the last fact of the last committed batch.
        saved_at: When the batch it follows began to be decided: changes of the run made after
            it belong to that batch or a later one, whose index payloads may not have been
            written yet (with a writer process the payloads of a batch are written after the
            next batch's metadata may have landed).
    """

    run_id: str
    started_at: datetime
    reference_time: datetime
    fingerprint: str
    incremental: bool
    since: datetime | None = None
    cursor: tuple[datetime, str] | None = None
    saved_at: datetime | None = None

    def advanced(self, cursor: tuple[datetime, str], at: datetime) -> RunCheckpoint:
        """The checkpoint after one more committed batch, begun at ``at``."""
        return replace(self, cursor=cursor, saved_at=at)

    def to_json(self) -> dict[str, JsonValue]:
        """JSON form."""
        return {
            "run_id": self.run_id,
            "started_at": _iso(self.started_at),
            "reference_time": _iso(self.reference_time),
            "fingerprint": self.fingerprint,
            "incremental": self.incremental,
            "since": _iso(self.since),
            "cursor": None if self.cursor is None else [self.cursor[0].isoformat(), self.cursor[1]],
        }

    @classmethod
    def from_json(cls, value: Any) -> RunCheckpoint | None:
        """Parse a checkpoint; ``None`` when absent or unreadable (a run then starts afresh)."""
        if not isinstance(value, dict):
            return None
        started, reference = _time(value.get("started_at")), _time(value.get("reference_time"))
        run_id, fingerprint = value.get("run_id"), value.get("fingerprint")
        if started is None or reference is None:
            return None
        if not isinstance(run_id, str) or not isinstance(fingerprint, str):
            return None
        cursor: tuple[datetime, str] | None = None
        raw = value.get("cursor")
        if isinstance(raw, list) and len(raw) == 2 and isinstance(raw[1], str):
            at = _time(raw[0])
            if at is None:
                return None
            cursor = (at, raw[1])
        return cls(
            run_id=run_id,
            started_at=started,
            reference_time=reference,
            fingerprint=fingerprint,
            incremental=bool(value.get("incremental")),
            since=_time(value.get("since")),
            cursor=cursor,
            saved_at=_time(value.get("saved_at")),
        )


@dataclass(frozen=True, slots=True)
class ConsolidationState:
    """The stored state of one selection: the last completed run and an unfinished one.

    Attributes:
        selector: The selection the state belongs to, in words.
        last_run_id: The last completed run.
        last_horizon: When it read its last (empty) page, after its last commit: an
            incremental run processes the facts written at or after it.
        last_finished_at: When it finished.
        in_progress: The checkpoint of an unfinished run, if any.
    """

    selector: str
    last_run_id: str | None = None
    last_horizon: datetime | None = None
    last_finished_at: datetime | None = None
    in_progress: RunCheckpoint | None = None

    def to_json(self) -> JsonValue:
        """JSON form, as stored."""
        return {
            "version": _VERSION,
            "selector": self.selector,
            "last_run_id": self.last_run_id,
            "last_horizon": _iso(self.last_horizon),
            "last_finished_at": _iso(self.last_finished_at),
            "in_progress": None if self.in_progress is None else self.in_progress.to_json(),
        }

    @classmethod
    def from_json(cls, selector: str, value: JsonValue | None) -> ConsolidationState:
        """Parse stored state; anything unreadable counts as "no state" (a full run)."""
        if not isinstance(value, dict) or value.get("version") != _VERSION:
            return cls(selector=selector)
        last_run_id = value.get("last_run_id")
        return cls(
            selector=selector,
            last_run_id=last_run_id if isinstance(last_run_id, str) else None,
            last_horizon=_time(value.get("last_horizon")),
            last_finished_at=_time(value.get("last_finished_at")),
            in_progress=RunCheckpoint.from_json(value.get("in_progress")),
        )

    def started(self, checkpoint: RunCheckpoint) -> ConsolidationState:
        """The state once a run has started (or advanced)."""
        return replace(self, in_progress=checkpoint)

    def finished(
        self, checkpoint: RunCheckpoint, *, horizon: datetime, at: datetime
    ) -> ConsolidationState:
        """The state once the run of ``checkpoint`` completed, its last read at ``horizon``."""
        return replace(
            self,
            last_run_id=checkpoint.run_id,
            last_horizon=horizon,
            last_finished_at=at,
            in_progress=None,
        )

    def describe(self) -> str:
        """One line for logs."""
        return json.dumps(self.to_json(), sort_keys=True)
