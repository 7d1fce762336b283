"""The samples' lake on a real S3-compatible object store (issue 31): `clwl run --lake s3://...` once, in a process
of its own as a user runs it (Spark through the S3A connector, the driver's reads through deltalake and Arrow,
the pointer and the lease through conditional puts), then:

- every silver and gold table holds the rows of the local samples lake (the session's `samples_lake`), the
  columns that differ between two runs by design (run ids, times, versions) left out, as bench/lake_digest.py;
- `clwl query`, `clwl published` and `clwl explain` answer from the store without a JVM;
- a second writer is refused in one line while the lease is held (exit 2, before Spark starts);
- a publish killed after a gold commit leaves readers on the published run, and the next publish settles it
  and publishes cleanly: on the store, as tests/spark/test_publish_atomic.py shows locally.

The server is the session's SeaweedFS (tests/objectstore.py). One pipeline run on the store for the module.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from clwl.lake import GOLD_TABLES, SILVER_TABLES, Lake, unsettled
from clwl.lakelock import MIN_LEASE_SECONDS
from spark.config import REPO_ROOT


def _readers_take_a_location() -> bool:
    """Whether the replay's and the report's readers (clwl/silver.py, clwl/report/, clwl/explain.py) take a lake
    location: until they do, the pipeline cannot replay a lake on a store (docs/object-storage.md)."""
    from clwl import silver

    try:
        return silver.table_path("s3://bucket/lake", "silver.message_events").startswith("s3://")
    except TypeError:
        return False


pytestmark = [pytest.mark.objectstore, pytest.mark.spark, pytest.mark.slow, pytest.mark.extended,
              pytest.mark.skipif(not _readers_take_a_location(),
                                 reason="clwl/silver.py, clwl/report and clwl/explain.py do not take a lake location "
                                        "yet (the integrator's patch of issue 31)")]

DAY = "2026-11-20"
#: The killed writer's lease (CLWL_LEASE_SECONDS): the next writer waits it out, so the shortest one accepted.
TEST_LEASE = int(MIN_LEASE_SECONDS)
VOLATILE = re.compile(r"(^|_)(run_id|run_ids|ingested_at|published_at|started_at|finished_at|seconds|"
                      r"table_versions|code_version|ingest_run_id|updated_at|created_at|written_at|duration_s)$")
CLWL = [sys.executable, "-m", "clwl"]

PUBLISH_SCRIPT = """
import sys
from spark.config import PipelineConfig
from spark.pipeline import publish_stage
from spark.run import PipelineRun
from spark.session import get_spark

config = PipelineConfig(lake=sys.argv[1], landing=sys.argv[2])
outcome = publish_stage(get_spark(config.master, app_name="clwl-kill-test", lake=config.lake),
                        PipelineRun(config, sys.argv[4]), sys.argv[3])
print("PUBLISHED" if outcome.published else "BLOCKED", flush=True)
"""


def _env(store, **more) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "CLWL_LAKE"}
    return {**env, **store.env(), **more}


def _clwl(store, *args, **more) -> subprocess.CompletedProcess:
    return subprocess.run([*CLWL, *args], env=_env(store, **more), capture_output=True, text=True, timeout=1500,
                          cwd=REPO_ROOT)


@pytest.fixture(scope="module")
def store_lake(object_store):
    """The samples published into a fresh prefix of the store by `clwl run` (both dates, one process)."""
    uri = object_store.lake_uri("samples")
    done = _clwl(object_store, "run", "--landing", str(REPO_ROOT / "samples" / "landing"), "--lake", uri)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    return uri


def _rows(lake: Lake, key: str) -> list[str]:
    version = lake.published_version(key) if key.startswith("gold.") else None
    data = lake.open(key, version).to_pyarrow_table()
    kept = [c for c in data.column_names if not VOLATILE.search(c)]
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in data.select(kept).to_pylist())


def test_every_silver_and_gold_table_equals_the_local_lakes(samples_lake, store_lake, object_store, monkeypatch):
    object_store.use(monkeypatch)
    local, remote = Lake(samples_lake.lake), Lake(store_lake)
    keys = [f"silver.{t}" for t in SILVER_TABLES] + [f"gold.{t}" for t in GOLD_TABLES]
    compared = 0
    for key in keys:
        assert local.exists(key) == remote.exists(key), key
        if local.exists(key):
            assert _rows(remote, key) == _rows(local, key), key
            compared += 1
    assert compared >= len(GOLD_TABLES) + 5
    assert set(remote.published().dates) == set(local.published().dates) == {"2026-11-19", DAY}
    assert unsettled(remote.layer("gold")) == []
    # the staged files were committed to gold server-side, not rewritten by Spark
    info = remote.open("gold.routing_replay").history(1)[0]
    assert "the files of s3://" in info.get("engineInfo", ""), info


def test_query_published_and_explain_read_the_store_without_a_jvm(samples_lake, store_lake, object_store):
    # rows read from the store's Parquet files (a count alone is answered from the table statistics)
    sql = (f"SELECT qmgr, count(*) AS n, max(msg_id) AS last FROM routing_replay WHERE run_date = DATE '{DAY}' "
           f"GROUP BY qmgr ORDER BY qmgr")
    local = _clwl(object_store, "query", "--lake", str(samples_lake.lake), "--format", "json", sql)
    remote = _clwl(object_store, "query", "--lake", store_lake, "--format", "json", sql)
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout and len(remote.stdout.splitlines()) >= 2
    published = _clwl(object_store, "published", "--json", "--lake", store_lake)
    assert published.returncode == 0, published.stderr
    assert set(json.loads(published.stdout)["tables"]) == set(GOLD_TABLES)
    msg = json.loads(_clwl(object_store, "query", "--lake", store_lake, "--format", "json",
                           f"SELECT msg_id FROM routing_replay WHERE run_date = DATE '{DAY}' ORDER BY msg_id "
                           f"LIMIT 1").stdout)["msg_id"]
    here = _clwl(object_store, "explain", msg, "--date", DAY, "--lake", str(samples_lake.lake), "--json")
    there = _clwl(object_store, "explain", msg, "--date", DAY, "--json", CLWL_LAKE=store_lake)
    assert there.returncode == 0, there.stderr
    timings = ("seconds",)  # how long each step took here: the one thing that differs by design
    assert ({k: v for k, v in json.loads(there.stdout).items() if k not in timings}
            == {k: v for k, v in json.loads(here.stdout).items() if k not in timings})


def test_a_second_writer_is_refused_in_one_line_while_the_lease_is_held(store_lake, object_store, monkeypatch):
    from clwl.lakelock import lake_lock

    object_store.use(monkeypatch)
    with lake_lock(store_lake, purpose="the first writer"):
        second = _clwl(object_store, "run", "--force", "--date", DAY, "--lake", store_lake)
    assert second.returncode == 2, (second.stdout[-2000:], second.stderr)
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "is in use by" in lines[0] and "the first writer" in lines[0], second.stderr


def test_a_publish_killed_after_a_gold_commit_leaves_readers_on_the_published_run(store_lake, object_store,
                                                                                  monkeypatch, tmp_path):
    """Runs last in the module (it publishes the day again). The day's staged tables are still there from the
    module's run: a publish of them (under their own run id, which the quality gate checks) is killed right after
    its second gold commit."""
    from clwl.query import run_query

    object_store.use(monkeypatch)
    lake = Lake(store_lake)
    before = lake.published()
    script = tmp_path / "publish.py"
    script.write_text(PUBLISH_SCRIPT)
    landing = str(REPO_ROOT / "samples" / "landing")
    run_id = before.dates[DAY]
    killed = subprocess.run([sys.executable, str(script), store_lake, landing, DAY, run_id],
                            env=_env(object_store, CLWL_TEST_KILL_AFTER_GOLD_WRITES="2",
                                     CLWL_LEASE_SECONDS=str(TEST_LEASE)), capture_output=True,
                            text=True, timeout=900, start_new_session=True, cwd=REPO_ROOT)
    assert killed.returncode == -9, (killed.stdout[-2000:], killed.stderr[-3000:])
    after = lake.published()
    assert after.raw == before.raw  # the pointer was not replaced: readers see the published run
    left = unsettled(lake.layer("gold"))
    assert left, "the killed publish left no gold commit after the published versions"
    # readers take the pointer's versions, behind the commits the killed publish left
    assert any(lake.version(f"gold.{t}") > before.tables[t] for t in GOLD_TABLES)
    n = run_query(f"SELECT count(*) AS n FROM routing_replay WHERE run_date = DATE '{DAY}'", store_lake)
    assert n.column("n").to_pylist()[0] > 0

    # The killed writer's lease stays until it expires (no kernel releases it on a store): the next writer waits
    # for that, then takes the lease over (clwl/lakelock.py), settles the killed publish and publishes.
    done = subprocess.run([sys.executable, str(script), store_lake, landing, DAY, run_id],
                          env=_env(object_store, CLWL_LOCK_WAIT=str(TEST_LEASE + 60)), capture_output=True,
                          text=True, timeout=900, cwd=REPO_ROOT)
    assert done.returncode == 0 and "PUBLISHED" in done.stdout, (done.stdout[-2000:], done.stderr[-3000:])
    again = lake.published()
    assert again.dates[DAY] == run_id
    assert all(again.tables[t] > before.tables[t] for t in GOLD_TABLES)  # settled (RESTORE), then published
    assert unsettled(lake.layer("gold")) == []
