"""The ingest's scratch folders `<lake>/_ingest/<run id>` (issue 13, item 12): an ingest removes its own at the end,
also when it fails, and removes those of runs that are no longer running when it starts."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clwl.lake.lock import lake_lock
from spark.config import REPO_ROOT, PipelineConfig

DAY = "2026-11-20"


def _dead_pid() -> int:
    """The pid of a process that has exited."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(proc.stdout)


def _plant(lake: Path, run_id: str, host: str, pid: int, age_seconds: float = 0) -> Path:
    folder = lake / "_ingest" / run_id
    (folder / "bronze.put_records").mkdir(parents=True)
    (folder / "bronze.put_records" / "part-0.parquet").write_bytes(b"left over")
    (folder / "_owner.json").write_text(json.dumps({"pid": pid, "host": host, "run_id": run_id}))
    if age_seconds:
        then = time.time() - age_seconds
        os.utime(folder, (then, then))
    return folder


def test_scratch_folders_of_runs_no_longer_running_are_removed(tmp_path):
    from spark.ingest import make_scratch

    lake = tmp_path / "lake"
    config = PipelineConfig(lake=lake)
    here = socket.gethostname()
    dead = _plant(lake, "run-dead", here, _dead_pid())
    alive = _plant(lake, "run-alive", here, os.getppid())  # a running process (pytest's parent)
    old_elsewhere = _plant(lake, "run-old-elsewhere", "another-host", 1, age_seconds=3 * 24 * 3600)
    new_elsewhere = _plant(lake, "run-new-elsewhere", "another-host", 1)

    mine = make_scratch(config, "run-mine")
    assert mine == lake / "_ingest" / "run-mine" and mine.is_dir()
    owner = json.loads((mine / "_owner.json").read_text())
    assert owner["pid"] == os.getpid() and owner["host"] == here and owner["run_id"] == "run-mine"
    assert not dead.exists() and not old_elsewhere.exists()
    assert alive.is_dir() and new_elsewhere.is_dir()  # may still be running

    # Under the lake lock no other ingest can be running: every other scratch folder is left over.
    with lake_lock(lake):
        make_scratch(config, "run-mine-2")
    assert sorted(p.name for p in (lake / "_ingest").iterdir()) == ["run-mine-2"]


@pytest.mark.spark
@pytest.mark.slow
def test_ingest_removes_its_scratch_on_success_and_on_failure(spark, tmp_path, monkeypatch):
    import spark.ingest.run as ingest_run  # the module whose ingest() calls write_tables

    landing = tmp_path / "landing"
    (landing / DAY / "QM1").mkdir(parents=True)
    for name in ("puts.csv", "config_060000.mqsc"):
        shutil.copy(REPO_ROOT / "samples" / "landing" / DAY / "QM1" / name, landing / DAY / "QM1" / name)
    lake = tmp_path / "lake"
    config = PipelineConfig(lake=lake, landing=landing)

    # 1. The writes fail after the parse filled the scratch folder: the folder goes all the same.
    _plant(lake, "run-killed-earlier", socket.gethostname(), _dead_pid())
    seen: list[list[str]] = []
    real_write_tables = ingest_run.write_tables

    def failing_write_tables(*args, **kwargs):
        seen.append(sorted(p.name for p in (lake / "_ingest").iterdir()))
        scratch = next(p for p in (lake / "_ingest").iterdir())
        assert list(scratch.rglob("*.parquet")), "the parse wrote nothing to the scratch folder"
        raise OSError("disk full (injected)")

    monkeypatch.setattr(ingest_run, "write_tables", failing_write_tables)
    with pytest.raises(OSError, match="injected"):
        ingest_run.ingest(config, [DAY], spark=spark, progress=lambda m: None)
    assert len(seen) == 1 and len(seen[0]) == 1 and seen[0][0] != "run-killed-earlier"  # the stale one went first
    assert not (lake / "_ingest").exists()

    # 2. A good ingest: nothing is left either (and a stale folder planted before it goes too).
    monkeypatch.setattr(ingest_run, "write_tables", real_write_tables)
    _plant(lake, "run-killed-earlier", socket.gethostname(), _dead_pid())
    summary = ingest_run.ingest(config, [DAY], spark=spark, progress=lambda m: None)
    assert summary.records_read > 0
    assert not (lake / "_ingest").exists()
