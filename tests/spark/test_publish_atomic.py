"""`kill -9` during a publish: every reader still sees all gold tables of one run (issue 13, item 10).

One lake is prepared once: run 1 of a sample date is published (run_pipeline), then run 2 of the same date is
ingested, replayed and staged from a changed landing folder (a late puts file left out, so each gold table of run
2 differs from run 1's). For each gold commit in turn, a copy of that lake gets run 2's publish in a subprocess that
SIGKILLs its own process group (Python and the Spark JVM) right after that commit (the test-only fault point
`CLWL_TEST_KILL_AFTER_GOLD_WRITES` of spark/publish.py). Then:

- `clwl query` (deltalake, no JVM), the report's reader (`read_gold`) and a Spark reader taking the versions of
  `gold/_published.json` as the README says all show run 1 in all four tables, though the killed publish left
  commits of run 2 in at least one of them (a reader of the latest versions would have seen a mix);
- the next publish first restores those tables to their published versions (so no row of the killed publish can
  reach a version published later, e.g. with another run date), then publishes run 2 cleanly: all four tables
  show run 2, and nothing is left beyond the published versions.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clwl.lake.door import GOLD_TABLES
from spark.config import REPO_ROOT, PipelineConfig

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DAY = "2026-11-20"
RUN1_LEFT_OUT = "QM1/puts_late.csv"  # in run 1's landing, not in run 2's
RUN2 = "run-two"
GOLD = GOLD_TABLES

PUBLISH_SCRIPT = """
import sys
from spark.config import PipelineConfig
from spark.stages import publish_stage
from spark.run import PipelineRun
from spark.session import get_spark

config = PipelineConfig(lake=sys.argv[1], landing=sys.argv[2])
outcome = publish_stage(get_spark(config.master, app_name="clwl-kill-test"), PipelineRun(config, sys.argv[4]),
                        sys.argv[3])
print("PUBLISHED" if outcome.published else "BLOCKED", flush=True)
"""


def _rows(table) -> list[str]:
    """A pyarrow table's rows, comparable as a sorted list (run_date and volatile columns kept as they are)."""
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in table.to_pylist())


def _delta_rows(path: Path, version: int | None = None) -> list[str]:
    from deltalake import DeltaTable

    return _rows(DeltaTable(str(path), version=version).to_pyarrow_table(filters=[("run_date", "=", _day())]))


def _day():
    import datetime as dt

    return dt.date.fromisoformat(DAY)


def _latest(path: Path) -> int:
    from deltalake import DeltaTable

    return DeltaTable(str(path)).version()


@pytest.fixture(scope="module")
def prepared(spark, samples_day_run, tmp_path_factory):
    """(lake, landing, run 1 id, expected rows per run and table) with run 1 published and run 2 staged.

    Run 1 is the session's `clwl run` of the sample date (tests/conftest.py samples_day_run, shared with the DAG
    tests), copied: its lake, and the date's landing folder (source_file is relative to the landing root, so the
    copy's files are the ones run 1 ingested)."""
    from spark.ingest import ingest
    from spark.run import PipelineRun
    from spark.stages import detect_stage, replay_stage

    assert samples_day_run.config.landing.resolve() == (REPO_ROOT / "samples" / "landing").resolve()
    root = tmp_path_factory.mktemp("atomic")
    landing = root / "landing"
    shutil.copytree(REPO_ROOT / "samples" / "landing" / DAY, landing / DAY)
    config = PipelineConfig(lake=root / "lake", landing=landing)
    shutil.copytree(samples_day_run.config.lake, config.lake, symlinks=True)
    run1 = samples_day_run.outcome
    assert [d.run_date for d in run1.dates] == [DAY] and run1.dates[0].published, run1.dates[0].failures
    gold = config.lake / "gold"
    pointer = json.loads((gold / "_published.json").read_text())
    assert pointer["dates"] == {DAY: run1.run_id}
    expected = {"run1": {t: _delta_rows(gold / t, pointer["tables"][t]) for t in GOLD[:3]}}

    (landing / DAY / RUN1_LEFT_OUT).unlink()
    ingest(config, [DAY], spark=spark, progress=lambda m: None)
    replay_stage(spark, PipelineRun(config, RUN2), DAY)
    detect_stage(spark, PipelineRun(config, RUN2), DAY)
    staging = config.lake / "staging"
    expected["run2"] = {t: _delta_rows(staging / t) for t in GOLD[:3]}
    for t in ("routing_replay", "distribution"):  # the sample's stuck messages are the same in both runs
        assert expected["run1"][t] != expected["run2"][t], t
    return config, run1.run_id, expected


def _which_run(rows: list[str], expected: dict, table: str) -> str:
    """"run1", "run2", "either" (the two runs wrote the same rows) or "neither"."""
    runs = [run for run in ("run1", "run2") if rows == expected[run][table]]
    return runs[0] if len(runs) == 1 else "either" if runs else "neither"


def _one_run(runs: dict, run: str) -> bool:
    return all(r in (run, "either") for r in runs.values())


def _summary(lake: Path) -> list[dict]:
    from clwl.lake.query import run_query

    return run_query(f"SELECT run_id, messages_replayed, messages_stuck, distribution_unexpected, table_versions "
                     f"FROM run_summary WHERE run_date = DATE '{DAY}'", lake).to_pylist()


# The last gold commit in the everyday suite, the ones before it (a minute each) with the extended tests, which
# CI runs too. Every kill point takes the same ways through the code: the readers pinned by the pointer, the
# roll-back of every table with a commit beyond it, the clean publish after. The last commit (5) is the case in
# which every table (run_summary too) has such a commit, so every one of them must be read at, and restored to, its
# published version; and its outcome is fixed (commits 1-4 are written side by side, so how many of them a kill
# after the first leaves is not). Commits 1-4 add the mixed state of a kill while the other writes are under way,
# and (2) the roll-back done by an ingest rather than by the settle call.
@pytest.mark.parametrize("kill_after", [pytest.param(n, marks=pytest.mark.extended) for n in range(1, len(GOLD))]
                         + [len(GOLD)],
                         ids=lambda n: f"kill-after-gold-commit-{n}")
def test_a_publish_killed_at_a_gold_commit_leaves_gold_on_one_run(spark, prepared, tmp_path, kill_after):
    from clwl.lake.query import run_query
    from clwl.report.read import read_gold
    from spark.run import PipelineRun
    from spark.stages import publish_stage

    base, run1_id, expected = prepared
    lake = tmp_path / "lake"
    shutil.copytree(base.lake, lake, symlinks=True)
    config = PipelineConfig(lake=lake, landing=base.landing)
    gold = lake / "gold"
    published_before = json.loads((gold / "_published.json").read_text())

    # 1. Run 2's publish, killed (SIGKILL to its whole process group) right after its Nth gold commit.
    script = tmp_path / "publish_and_die.py"
    script.write_text(PUBLISH_SCRIPT)
    env = {**os.environ, "CLWL_TEST_KILL_AFTER_GOLD_WRITES": str(kill_after),
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(script), str(lake), str(config.landing), DAY, RUN2], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=900)
    finally:
        try:  # the group this test started (pgid = its pid): nothing of it may outlive the test
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, out[-2000:], err[-4000:])
    assert "PUBLISHED" not in out
    print(f"killed after gold commit {kill_after} in {time.monotonic() - started:.1f} s")

    pointer = json.loads((gold / "_published.json").read_text())
    assert pointer["tables"] == published_before["tables"] and pointer["dates"] == {DAY: run1_id}
    beyond = {t for t in GOLD if _latest(gold / t) > pointer["tables"][t]}
    assert len(beyond) >= min(kill_after, len(GOLD) - 1), beyond  # committed (all but run_summary side by side)
    if kill_after == len(GOLD):
        assert beyond == set(GOLD)

    # 2. clwl query (no JVM): all four tables from run 1.
    runs = {t: _which_run(_rows(run_query(f"SELECT * FROM {t} WHERE run_date = DATE '{DAY}'", lake)), expected, t)
            for t in GOLD[:3]}
    summary = _summary(lake)
    assert _one_run(runs, "run1") and [s["run_id"] for s in summary] == [run1_id], (runs, summary)
    # run_summary records the versions its publish wrote: the ones read are exactly those.
    assert {k: v for k, v in dict(summary[0]["table_versions"]).items() if k.startswith("gold.")} == \
        {f"gold.{t}": pointer["tables"][t] for t in GOLD[:-1]}

    # 3. The report's reader: the published versions, and counts that agree with run 1's run_summary.
    tables = read_gold(config.lake, _day())
    assert {t: tables[t].version for t in GOLD} == pointer["tables"]
    row = tables["run_summary"].frame.iloc[0]
    assert row["run_id"] == run1_id and len(tables["run_summary"].frame) == 1
    assert int(tables["routing_replay"].frame["messages"].sum()) == row["messages_replayed"] == \
        summary[0]["messages_replayed"]
    assert len(tables["stuck_messages"].frame) == row["messages_stuck"]
    assert int((tables["distribution"].frame["verdict"] == "unexpected").sum()) == row["distribution_unexpected"]

    # 4. A Spark reader following `clwl published` (no JVM): its Spark SQL and PySpark statements are pinned to the
    #    published versions, so they read run 1 while the latest versions hold run 2's unfinished commits.
    shown = subprocess.run([sys.executable, "-m", "clwl", "published", "--lake", str(lake), "--json"],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    recipes = json.loads(shown.stdout)
    assert {t: r["version"] for t, r in recipes["tables"].items()} == pointer["tables"]
    assert {u.split(" ")[0] for u in recipes["unsettled"]} == beyond, recipes["unsettled"]
    spark_ids = [r.run_id for r in spark.sql(recipes["tables"]["run_summary"]["spark_sql"])
                 .where(f"run_date = DATE'{DAY}'").select("run_id").collect()]
    replay_recipe = recipes["tables"]["routing_replay"]["pyspark"]
    assert replay_recipe.startswith('spark.read.format("delta").option("versionAsOf", ')
    spark_rows = eval(replay_recipe, {"spark": spark}).where(f"run_date = DATE'{DAY}'").count()  # noqa: S307
    assert spark_ids == [run1_id] and spark_rows == row["messages_replayed"]

    # 5. The next command that writes the lake first puts the orphan commits back (here an ingest with nothing
    #    new, or the roll-back it calls): after that even a reader of the latest versions sees run 1.
    if kill_after == 2:
        from spark.ingest import ingest

        ingest(config, [DAY], spark=spark, progress=lambda m: None)
    else:
        from clwl.lake.door import Lake
        from spark.publish import settle_before_writing

        lines: list[str] = []
        done = settle_before_writing(Lake(config.lake), lambda: spark, lines.append)
        assert set(done) == beyond and "a publish did not finish" in lines[0], (done, lines)
    from clwl.lake.door import unsettled

    assert unsettled(gold) == []
    for t in GOLD[:3]:
        assert _delta_rows(gold / t) == expected["run1"][t], t

    # 6. ... and then publishes run 2 cleanly, in all four tables.
    outcome = publish_stage(spark, PipelineRun(config, RUN2), DAY)
    assert outcome.published, outcome.failures
    pointer = json.loads((gold / "_published.json").read_text())
    assert pointer["dates"] == {DAY: RUN2}
    assert pointer["tables"] == {t: _latest(gold / t) for t in GOLD}
    runs = {t: _which_run(_rows(run_query(f"SELECT * FROM {t} WHERE run_date = DATE '{DAY}'", lake)), expected, t)
            for t in GOLD[:3]}
    summary = _summary(lake)
    assert _one_run(runs, "run2") and [s["run_id"] for s in summary] == [RUN2], (runs, summary)
    assert {k: v for k, v in dict(summary[0]["table_versions"]).items() if k.startswith("gold.")} == \
        {f"gold.{t}": pointer["tables"][t] for t in GOLD[:-1]}
