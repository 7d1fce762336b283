"""The nightly DAG with its lake on the object store (issue 31: "--lake s3://... for every command: ... the DAGs"):
`CLWL_LAKE=s3://...` as docker-compose.yml sets it, dag.test() of clwl_nightly for 2026-11-20 on the samples, and

- every task succeeds, and the publish task's gold Asset events name the tables on the store
  (`s3://<bucket>/<prefix>/gold/<table>`), so the reports DAG is scheduled by the store's tables;
- the day is published on the store (its pointer), with its report under `<lake>/reports/2026-11-20/`;
- every gold table equals `clwl run --date 2026-11-20` into a local lake on the same landing (the columns that
  differ between two runs by design left out: tests/lake_compare.py).

dag.test() runs in a process of its own: its Spark session has the S3A connector, which the session's local
`spark` (used by other tests of this process) has not, and get_spark would stop that one to start it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from clwl.lake.door import GOLD_TABLES, Lake
from clwl.lake.storage import lake_root, list_prefix
from tests.lake_compare import EMPTY_ON_SAMPLES, comparable_rows
from dagtest_support import DAGS, ROOT, RUN_DATE

pytestmark = [pytest.mark.airflow, pytest.mark.spark, pytest.mark.slow, pytest.mark.extended,
              pytest.mark.objectstore]

LANDING = ROOT / "samples" / "landing"
NIGHTLY = f"""
import datetime as dt, json, sys
sys.path[:0] = [{str(DAGS)!r}, {str(ROOT / "tests" / "dags")!r}]
from dagtest_support import UTC, load_dag, task_states
from airflow.models.asset import AssetEvent, AssetModel
from airflow.utils.session import create_session

# A logical date of its own: the other DAG tests of a session use 2026-11-20's.
run = load_dag("clwl_nightly").test(logical_date=dt.datetime(2026, 11, 27, tzinfo=UTC),
                                    run_conf={{"run_date": "{RUN_DATE}"}})
with create_session() as session:
    uris = [u for (u,) in session.query(AssetModel.uri).join(AssetEvent, AssetEvent.asset_id == AssetModel.id)]
print("RESULT " + json.dumps({{"states": task_states(run), "asset_events": uris}}))
"""


@pytest.fixture(scope="module")
def nightly_on_the_store(airflow_db, object_store, tmp_path_factory, spark):
    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline

    lake = object_store.lake_uri("nightly")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("AWS_") and k not in ("CLWL_SPARK_MASTER", "CLWL_SPARK_REMOTE")}
    env.update(object_store.env(), CLWL_LAKE=lake, CLWL_LANDING=str(LANDING))
    done = subprocess.run([sys.executable, "-c", NIGHTLY], env=env, cwd=tmp_path_factory.mktemp("nightly-cwd"),
                          capture_output=True, text=True, timeout=1800)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    assert done.returncode == 0 and lines, (done.stdout[-3000:], done.stderr[-5000:])
    local = tmp_path_factory.mktemp("nightly-reference") / "lake"
    outcome = run_pipeline(PipelineConfig(lake=local, landing=LANDING), [RUN_DATE], spark=spark,
                           progress=lambda m: None)
    assert outcome.published, outcome
    return lake, local, json.loads(lines[-1].removeprefix("RESULT "))


def test_every_task_succeeds_and_the_assets_name_the_store(nightly_on_the_store):
    lake, _, result = nightly_on_the_store
    assert result["states"] == {t: "success" for t in ("ingest", "changed", "replay", "detect", "publish",
                                                        "report", "metrics")}, result["states"]
    assert {f"{lake}/gold/{t}" for t in GOLD_TABLES} <= set(result["asset_events"]), result["asset_events"]


def test_the_day_is_published_on_the_store_as_clwl_run_publishes_it(nightly_on_the_store, object_store,
                                                                     monkeypatch):
    lake, local, _ = nightly_on_the_store
    object_store.use(monkeypatch)
    remote = Lake(lake)
    assert set(remote.published().dates) == {RUN_DATE}
    reports = {key for key, _ in list_prefix(lake_root(lake) / "reports" / RUN_DATE)}
    assert {"report.html", "summary.md", "quality/index.html"} <= reports, reports  # the Data Docs uploaded too
    for table in GOLD_TABLES:
        rows = comparable_rows(remote, f"gold.{table}")
        assert rows == comparable_rows(local, f"gold.{table}"), f"gold.{table} differs from clwl run's"
        assert rows or table in EMPTY_ON_SAMPLES, table
