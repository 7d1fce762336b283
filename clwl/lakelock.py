"""One writer per lake: the lock file ``<lake>/_lock``, held with ``fcntl.flock`` while a process writes the lake.

``clwl run`` (spark.pipeline.run_pipeline), ``clwl ingest``, every publish (spark.publish.publish) and the
Airflow tasks that write take it. A second writer does not wait by default: it stops at once with
:class:`LakeBusy`, whose message is one line naming the holder (process id, host, what it runs, since when);
the CLI prints it and exits 2. ``CLWL_LOCK_WAIT=<seconds>`` (or ``wait=``) makes it wait that long instead
(the Airflow tasks wait, see dags/clwl_dag_support.py).

The lock is the kernel's: it goes with the process, so a killed writer never leaves a stale lock behind (the
file stays, holding only the last holder's description). Within one process the lock is re-entrant (run_pipeline
holds it and the publish it calls takes it again). ``flock`` serialises processes on one host and, on most
network file systems that support it (NFS v4, CephFS), across hosts; a lake on storage without ``flock``
support gets :class:`LakeLockError`.

Importable without pyspark (the CLI, `clwl query` and the DAG files use it).
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import json
import os
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Optional

from clwl.lake import LOCK_FILE, read_lake_json

WAIT_ENV = "CLWL_LOCK_WAIT"

_held: dict[str, list] = {}  # lock file path -> [fd, depth]: the locks this process holds
_guard = threading.Lock()


class LakeLockError(RuntimeError):
    """The lake lock cannot be taken (one line, for stderr)."""


class LakeBusy(LakeLockError):
    """Another process holds the lake lock."""

    def __init__(self, message: str, holder: dict):
        super().__init__(message)
        self.holder = holder


def lock_path(lake: Path | str) -> Path:
    return Path(lake).expanduser().absolute() / LOCK_FILE


def holds_lock(lake: Path | str) -> bool:
    """Whether this process holds the lake's lock."""
    with _guard:
        return str(lock_path(lake)) in _held


def _wait_default() -> float:
    raw = os.environ.get(WAIT_ENV, "").strip()
    try:
        return max(0.0, float(raw)) if raw else 0.0
    except ValueError:
        raise LakeLockError(f"{WAIT_ENV}={raw!r}: not a number of seconds") from None


def _describe(holder: dict) -> str:
    if not holder:
        return "another process (it has not written its name into the lock file yet)"
    return (f"pid {holder.get('pid', '?')} on {holder.get('host', '?')} ({holder.get('purpose') or 'clwl'}), "
            f"since {holder.get('since', '?')}")


def read_holder(lake: Path | str) -> dict:
    """What the lock file says about its (last) holder; {} when it says nothing readable."""
    try:
        data = read_lake_json(lock_path(lake))  # bounded: never a FIFO's hang; empty: not JSON, {}
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


@contextmanager
def lake_lock(lake: Path | str, *, purpose: str = "clwl", wait: Optional[float] = None,
              progress: Optional[Callable[[str], object]] = None) -> Iterator[Path]:
    """Hold ``<lake>/_lock`` for the block (creating the lake folder if needed).

    wait: seconds to wait for another holder (default ``$CLWL_LOCK_WAIT``, else 0: :class:`LakeBusy` at once).
    progress: told once when the call starts waiting, then every minute.
    """
    path = lock_path(lake)
    key = str(path)
    with _guard:
        if key in _held:
            _held[key][1] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield path
        finally:
            with _guard:
                _held[key][1] -= 1
        return

    limit = _wait_default() if wait is None else max(0.0, float(wait))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o664)
    except OSError as exc:
        raise LakeLockError(f"cannot open the lake lock {path}: {exc.strerror or exc}") from None
    try:
        deadline = time.monotonic() + limit
        told: Optional[float] = None
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise LakeLockError(f"cannot lock {path}: {exc.strerror or exc} (does the lake's storage "
                                        f"support flock?)") from None
            holder = read_holder(lake)
            now = time.monotonic()
            if now >= deadline:
                waited = f" after waiting {limit:.0f} s" if limit else ""
                raise LakeBusy(f"the lake {path.parent} is in use by {_describe(holder)}{waited}; only one "
                               f"writer at a time (lock file {path})", holder)
            if progress is not None and (told is None or now - told >= 60):
                progress(f"waiting for the lake {path.parent}: in use by {_describe(holder)} "
                         f"(up to {deadline - now:.0f} s more)")
                told = now
            time.sleep(min(1.0, max(0.05, deadline - now)))
        info = {"pid": os.getpid(), "host": socket.gethostname(), "purpose": purpose,
                "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode("utf-8"), 0)
        with _guard:
            _held[key] = [fd, 1]
    except BaseException:
        os.close(fd)  # also releases the flock, if taken
        raise
    try:
        yield path
    finally:
        with _guard:
            _held.pop(key, None)
        os.close(fd)  # releases the lock; the file stays (removing it would race with the next holder)
