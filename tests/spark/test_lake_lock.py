"""One writer per lake (issue 13, item 11): `<lake>/_lock`, held with flock by `clwl run`, `clwl ingest`, every
publish and the Airflow tasks that write.

The first test needs no Spark: a second process holds the lock, and the library call, `clwl run` and `clwl ingest`
are refused at once with one line naming the holder (exit 2 from the CLI), a waiting caller gets the lock when the
holder lets go, and a holder killed with SIGKILL leaves no stale lock. The second has two real `clwl run`
processes on one empty lake at once: the first runs the day to its end, the second is refused with one line naming
the first, no traceback.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from clwl.lake.lock import LakeBusy, holds_lock, lake_lock
from spark.config import REPO_ROOT
from tests.handmade import DAY

SAMPLES = REPO_ROOT / "samples" / "landing"
HOLDER = """
import sys
from clwl.lake.lock import lake_lock

with lake_lock(sys.argv[1], purpose="test holder"):
    print("held", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
            "CLWL_LOCK_WAIT": ""}


def _holder(lake: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(lake)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=_env())
    assert proc.stdout.readline().strip() == "held"
    return proc


def _clwl(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clwl.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=_env(), cwd=REPO_ROOT)


def test_a_second_writer_is_refused_at_once_with_one_line(tmp_path):
    lake = tmp_path / "lake"
    holder = _holder(lake)
    try:
        # The library call: LakeBusy at once, one line naming the holder.
        started = time.monotonic()
        with pytest.raises(LakeBusy) as busy:
            with lake_lock(lake, purpose="second"):
                pass
        assert time.monotonic() - started < 2
        message = str(busy.value)
        assert "\n" not in message
        assert f"pid {holder.pid} on {socket.gethostname()} (test holder), since 20" in message, message
        assert str(lake / "_lock") in message
        assert busy.value.holder["pid"] == holder.pid

        # The CLI: exit 2, one line on stderr, no traceback, before any Spark session starts.
        for command, prefix in ((["run", "--landing", str(SAMPLES), "--lake", str(lake)], "clwl run: "),
                                (["ingest", "--landing", str(SAMPLES), "--lake", str(lake)], "clwl ingest: ")):
            t0 = time.monotonic()
            proc = _clwl(*command)
            assert proc.returncode == 2, (command, proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
            assert "Traceback" not in proc.stderr
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith(prefix + "the lake ") and f"pid {holder.pid}" in lines[0]
            assert not (lake / "bronze").exists() and not (lake / "silver").exists()
            print(f"{command[0]} refused in {time.monotonic() - t0:.1f} s")

        # A caller that waits gets the lock once the holder lets go, and is told it is waiting.
        told: list[str] = []
        threading.Timer(1.0, holder.stdin.close).start()
        t0 = time.monotonic()
        with lake_lock(lake, purpose="waiter", wait=60, progress=told.append):
            waited = time.monotonic() - t0
            assert holds_lock(lake)
            with lake_lock(lake, purpose="nested"):  # re-entrant within the process
                assert holds_lock(lake)
            assert holds_lock(lake)
        assert not holds_lock(lake)
        assert 0.5 < waited < 30, waited
        assert len(told) == 1 and told[0].startswith("waiting for the lake ") and f"pid {holder.pid}" in told[0]
        assert holder.wait(timeout=30) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()

    # A holder killed with SIGKILL leaves no stale lock: the kernel drops it with the process.
    holder = _holder(lake)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    with lake_lock(lake, wait=0):
        pass


@pytest.mark.spark
@pytest.mark.slow
def test_two_first_runs_on_an_empty_lake_one_runs_the_other_is_refused(blocked_day_runs):
    """The reported race: two `clwl run` on an empty lake at once; one used to die with a traceback at table
    creation. Now the second is refused at once (exit 2, one line naming the first, before the first is done) and
    the first is not disturbed: it creates the lake's tables and runs the day to its end. The runs are the session
    fixture ``blocked_day_runs`` (tests/conftest.py), whose day the quality gate blocks, so that end is exit 4 and
    nothing published (tests/spark/test_blocked_run_cli.py checks the run; that a `clwl run` on an empty lake
    publishes, the samples_lake fixture shows): one pipeline run serves both files."""
    runs = blocked_day_runs
    first, second = runs.first, runs.second
    # The second started on an empty lake: nothing in it yet but the first's lock.
    assert runs.lake_before_second == ["_lock"], runs.lake_before_second
    assert second.returncode == 2, (second.returncode, second.stdout[-2000:], second.stderr[-3000:])
    assert "Traceback" not in second.stderr and "Traceback" not in first.stderr, (second.stderr[-3000:],
                                                                                  first.stderr[-3000:])
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("clwl run: the lake "), second.stderr[-3000:]
    assert f"pid {first.pid} on {socket.gethostname()} (clwl run run-" in lines[0], lines[0]
    assert runs.second_ended_first, (first.seconds, second.seconds)
    assert first.returncode == 4 and f"{DAY}: BLOCKED by the quality gate" in first.stdout, \
        (first.returncode, first.stdout[-3000:], first.stderr[-3000:])
    assert {"bronze", "silver", "staging"} <= {p.name for p in runs.lake.iterdir()}
