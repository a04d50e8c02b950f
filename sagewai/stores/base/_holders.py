"""Which process holds a lock on a file: what a "folder in use" error names.

Why: when a store cannot be opened because another process holds its lock, the user needs to
know which process that is (an agent, a ``sagewai mcp`` server their editor started, a cron
job) to decide what to stop. Linux lists every file lock in ``/proc/locks`` with the holder's
pid and the file's inode; elsewhere nothing is found and the message says so less precisely.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["describe_holders"]


def _holders(files: list[Path]) -> list[int]:
    """Pids holding a lock on one of ``files`` (Linux; empty elsewhere or when unreadable)."""
    inodes: set[tuple[int, int, int]] = set()
    for file in files:
        try:
            info = file.stat()
        except OSError:
            continue
        inodes.add((os.major(info.st_dev), os.minor(info.st_dev), info.st_ino))
    if not inodes:
        return []
    try:
        lines = Path("/proc/locks").read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return []
    found: list[int] = []
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF" (a blocked waiter has "->" first)
        if len(fields) < 6 or fields[1] == "->":
            continue
        try:
            pid = int(fields[4])
            major, minor, inode = fields[5].split(":")
            key = (int(major, 16), int(minor, 16), int(inode))
        except ValueError:
            continue
        if key in inodes and pid != os.getpid() and pid not in found:
            found.append(pid)
    return found


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    text = " ".join(" ".join(words).split())  # one line, whatever the arguments hold
    return text if len(text) <= 120 else text[:117] + "..."


def describe_holders(folder: Path) -> str:
    """``"process 4242 (python -m sagewai mcp ...)"`` for the processes locking a file of
    ``folder`` (or ``folder`` itself when it is a file); ``"another process"`` when none can
    be named.

    Example:
        >>> describe_holders(Path("/nonexistent"))
        'another process'
    """
    files = [folder, *folder.rglob("*")] if folder.is_dir() else [folder]
    pids = _holders(files)
    if not pids:
        return "another process"
    named = []
    for pid in pids:
        command = _command(pid)
        named.append(f"process {pid} ({command})" if command else f"process {pid}")
    return ", ".join(named)
