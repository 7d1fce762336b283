"""The DAGs' rules as fast tests, no Spark: the run date a DAG run processes (the one rule of
clwl_dag_support.choose_run_date, and what it gives for the runs `airflow dags trigger` and the REST API create).

Why no scheduler is started: the run date depends only on the DagRun's run type, logical date, data interval and
run_after, which are fixed when the run is created (by `airflow dags trigger`, the REST API's trigger route or
the scheduler), never by the scheduler that later runs it. So the test creates the runs with Airflow's own code
for each path (the `airflow dags trigger` command itself, the REST API's request body) and applies the rule to
the stored DagRun: what a real scheduler would hand the tasks.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from dagtest_support import UTC

pytestmark = pytest.mark.airflow


def choose(**kw):
    from clwl_dag_support import choose_run_date

    base = {"requested": None, "run_type": "manual", "logical_date": None, "data_interval_start": None,
            "run_after": None}
    return choose_run_date(**{**base, **kw})


def test_the_run_date_rule():
    # A run_date in the conf wins over everything.
    day, why = choose(requested="2026-11-19", run_type="scheduled",
                      data_interval_start=dt.datetime(2026, 11, 20, 2, 30, tzinfo=UTC))
    assert (day, why) == ("2026-11-19", "the run_date given with the run")
    # Scheduled: the 02:30 run of 11-21 has the data interval [11-20 02:30, 11-21 02:30): run date 11-20.
    day, why = choose(run_type="scheduled", logical_date=dt.datetime(2026, 11, 20, 2, 30, tzinfo=UTC),
                      data_interval_start=dt.datetime(2026, 11, 20, 2, 30, tzinfo=UTC),
                      run_after=dt.datetime(2026, 11, 21, 2, 30, tzinfo=UTC))
    assert day == "2026-11-20" and "data interval" in why
    # A backfill's run of 11-15 is a scheduled interval too.
    assert choose(run_type="backfill", data_interval_start=dt.datetime(2026, 11, 15, 2, 30, tzinfo=UTC))[0] \
        == "2026-11-15"
    # Manual with an explicit logical date 11-21: that day, though Airflow inferred the data interval from the
    # trigger time (11-28 10:00 gives [11-27 02:30, 11-28 02:30), run date 11-27: issue 43's defect).
    day, why = choose(logical_date=dt.datetime(2026, 11, 21, tzinfo=UTC),
                      data_interval_start=dt.datetime(2026, 11, 27, 2, 30, tzinfo=UTC),
                      run_after=dt.datetime(2026, 11, 28, 10, tzinfo=UTC))
    assert (day, why) == ("2026-11-21", "the logical date given with the trigger")
    # A logical date in another zone is taken as its UTC day: 11-21 23:00 at UTC-5 is 11-22 04:00 UTC.
    assert choose(logical_date=dt.datetime(2026, 11, 21, 23, tzinfo=dt.timezone(dt.timedelta(hours=-5))))[0] \
        == "2026-11-22"
    # Manual without any date, triggered 11-28 10:00 UTC: the previous complete UTC day, 11-27 (not 11-28, a day
    # still being written); at 11-28 00:30 UTC too, and at 11-27 23:00 UTC-5 (= 11-28 04:00 UTC) as well.
    for after in (dt.datetime(2026, 11, 28, 10, tzinfo=UTC), dt.datetime(2026, 11, 28, 0, 30, tzinfo=UTC),
                  dt.datetime(2026, 11, 27, 23, tzinfo=dt.timezone(dt.timedelta(hours=-5)))):
        day, why = choose(run_after=after)
        assert day == "2026-11-27" and why.startswith("the previous complete UTC day"), (after, day)


def test_resolve_run_date_reads_the_dag_run_and_logs_its_reason(caplog):
    from clwl_dag_support import resolve_run_date

    run = SimpleNamespace(run_type="manual", logical_date=None, data_interval_start=None, conf={},
                          run_after=dt.datetime(2026, 11, 28, 10, tzinfo=UTC))
    with caplog.at_level("INFO", logger="clwl_dag_support"):
        assert resolve_run_date({"params": {"run_date": None}, "dag_run": run}) == "2026-11-27"
    assert "run date 2026-11-27: the previous complete UTC day before the trigger at 2026-11-28 10:00" in caplog.text
    assert resolve_run_date({"params": {}, "dag_run": SimpleNamespace(**{**vars(run), "conf": {
        "run_date": "2026-11-02"}})}) == "2026-11-02"


@pytest.fixture(scope="module")
def nightly_in_db(airflow_db):
    """clwl_nightly parsed and written to the metadata database (what the DAG processor does), no run yet."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import BundleDagBag, sync_bag_to_db
    from airflow.utils.session import create_session

    manager = DagBundlesManager()
    with create_session() as session:
        manager.sync_bundles_to_db(session=session)
    for bundle in manager.get_all_dag_bundles():
        bundle.initialize()
        bag = BundleDagBag(dag_folder=bundle.path, bundle_path=bundle.path, bundle_name=bundle.name)
        sync_bag_to_db(bag, bundle.name, bundle.version)
    yield "clwl_nightly"


def _runs(dag_id: str, run_ids: set[str] | None = None):
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session

    with create_session() as session:
        runs = session.query(DagRun).filter(DagRun.dag_id == dag_id).all()
        session.expunge_all()
    return [r for r in runs if run_ids is None or r.run_id in run_ids]


def test_airflow_dags_trigger_and_the_rest_body_get_the_rule(nightly_in_db):
    """`airflow dags trigger clwl_nightly --logical-date 2026-11-21` processes 11-21 (it processed the day before
    the trigger's own date); without a date, the day before the trigger. The REST API's body is checked the same
    way: TriggerDAGRunPostBody.validate_context is what POST /dags/{id}/dagRuns stores."""
    from airflow.api_fastapi.core_api.datamodels.dag_run import TriggerDAGRunPostBody
    from airflow.models.dagrun import DagRun
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.session import create_session

    from clwl_dag_support import resolve_run_date

    cli = Path(sys.executable).with_name("airflow")
    before = {r.run_id for r in _runs(nightly_in_db)}
    for extra in (["--logical-date", "2026-11-21T00:00:00+00:00"], []):
        proc = subprocess.run([str(cli), "dags", "trigger", nightly_in_db, *extra], env=os.environ.copy(),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    made = [r for r in _runs(nightly_in_db) if r.run_id not in before]
    try:
        assert len(made) == 2
        dated = next(r for r in made if r.logical_date is not None)
        undated = next(r for r in made if r.logical_date is None)
        # Airflow took the data interval of the dated run from the trigger time, not from its logical date.
        assert str(dated.run_type.value if hasattr(dated.run_type, "value") else dated.run_type) == "manual"
        assert resolve_run_date({"params": {}, "dag_run": dated}) == "2026-11-21"
        want = (undated.run_after.astimezone(UTC).date() - dt.timedelta(days=1)).isoformat()
        assert resolve_run_date({"params": {}, "dag_run": undated}) == want
    finally:
        with create_session() as session:
            session.query(DagRun).filter(DagRun.run_id.in_([r.run_id for r in made])).delete()

    with create_session() as session:
        dag = SerializedDagModel.get_dag(nightly_in_db, session=session)
    for body, want in (({"logical_date": "2026-11-21T00:00:00Z"}, "2026-11-21"),
                       ({"logical_date": None, "run_after": "2026-11-28T10:00:00Z"}, "2026-11-27")):
        fields = TriggerDAGRunPostBody.model_validate(body).validate_context(dag)
        run = SimpleNamespace(run_type="manual", conf=fields["conf"], logical_date=fields["logical_date"],
                              data_interval_start=fields["data_interval"].start if fields["data_interval"] else None,
                              run_after=fields["run_after"])
        assert resolve_run_date({"params": {}, "dag_run": run}) == want, body



def test_a_tasks_spark_output_goes_under_airflows_log_folder(tmp_path, monkeypatch):
    """One place for the JVM's output of the DAG tasks, beside the task logs (not one file a task left in the
    temp folder): the path the task sets, and spark.session taking it."""
    from clwl_dag_support import spark_log_file
    from spark.session import SPARK_LOG_ENV, spark_log_path

    path = spark_log_file(tmp_path / "logs", "clwl_nightly", "manual__2026-11-21T00:00:00+00:00", "publish", 2)
    assert path == (tmp_path / "logs" / "clwl-spark" / "dag_id=clwl_nightly"
                    / "run_id=manual__2026-11-21T00-00-00-00-00" / "task_id=publish" / "attempt=2.log")
    monkeypatch.setenv(SPARK_LOG_ENV, str(path))
    assert spark_log_path() == path and path.parent.is_dir()
    monkeypatch.delenv(SPARK_LOG_ENV)
    assert spark_log_path().name.startswith("clwl-spark-")  # the CLI's: the temp folder, as before
