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
import json
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
    from spark.session import SPARK_LOG_ENV, spark_log_path
    from clwl_dag_support import spark_log_file

    path = spark_log_file(tmp_path / "logs", "clwl_nightly", "manual__2026-11-21T00:00:00+00:00", "publish", 2)
    assert path == (tmp_path / "logs" / "clwl-spark" / "dag_id=clwl_nightly"
                    / "run_id=manual__2026-11-21T00-00-00-00-00" / "task_id=publish" / "attempt=2.log")
    monkeypatch.setenv(SPARK_LOG_ENV, str(path))
    assert spark_log_path() == path and path.parent.is_dir()
    monkeypatch.delenv(SPARK_LOG_ENV)
    assert spark_log_path().name.startswith("clwl-spark-")  # the CLI's: the temp folder, as before


# ------------------------------------------------------------------------------------------------ alerts
GATE_ERROR = ("quality gate blocked publishing 2026-11-20 (run clwl_nightly__scheduled__x): 1 failed "
              "expectation(s): gold.routing_replay: expect_compound_columns_to_be_unique (run_date, msg_id). "
              "Validation results: /lake/validation/clwl_nightly__scheduled__x. The published tables keep "
              "their last good version.")


@pytest.fixture()
def webhook():
    """A Slack-like incoming webhook on 127.0.0.1: what it was posted, as JSON."""
    import http.server
    import json
    import threading

    got: list[dict] = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/services/T000/B000/XXXX", got
    server.shutdown()
    server.server_close()


def scheduled_run():
    # The 02:30 run of 11-21: data interval from 11-20 02:30, run date 11-20.
    return SimpleNamespace(dag_id="clwl_nightly", run_id="scheduled__2026-11-20T02:30:00+00:00",
                           run_type="scheduled", conf={}, logical_date=dt.datetime(2026, 11, 20, 2, 30, tzinfo=UTC),
                           data_interval_start=dt.datetime(2026, 11, 20, 2, 30, tzinfo=UTC),
                           run_after=dt.datetime(2026, 11, 21, 2, 30, tzinfo=UTC))


def test_a_blocked_night_notifies_slack_when_a_webhook_connection_is_configured(webhook, tmp_path, monkeypatch):
    """The notifier with a real webhook connection (from the environment, as a secrets backend gives it) posts
    one line: the date (by the run date rule), the gate's reason, the report's location."""
    from airflow.sdk.exceptions import AirflowFailException
    from clwl_alerts import NightlyNotifier

    url, got = webhook
    monkeypatch.setenv("CLWL_LAKE", str(tmp_path / "lake"))
    monkeypatch.setenv("AIRFLOW_CONN_CLWL_SLACK", json.dumps({"conn_type": "slackwebhook", "password": url}))
    NightlyNotifier().notify({"dag_run": scheduled_run(), "ti": SimpleNamespace(task_id="publish"),
                              "exception": AirflowFailException(GATE_ERROR)})
    assert got == [{"text": f"clwl: clwl_nightly was blocked by the quality gate for 2026-11-20: {GATE_ERROR} "
                            f"(report: {tmp_path / 'lake' / 'reports'}/2026-11-20/report.html; Airflow run "
                            f"scheduled__2026-11-20T02:30:00+00:00)"}]


def test_a_long_reason_keeps_its_start_and_its_end():
    """A badly broken day's gate lists many failures: the line keeps the first ones and the end, where the
    validation results folder is."""
    from clwl_alerts import one_line

    reason = "quality gate blocked publishing 2026-11-20: " + "; ".join(f"failure {i}" for i in range(200)) + \
        ". Validation results: /lake/validation/r1."
    line = one_line(reason, limit=120)
    assert len(line) <= 120 and line.startswith("quality gate blocked publishing 2026-11-20: failure 0;")
    assert line.endswith("Validation results: /lake/validation/r1.") and " … " in line
    assert one_line("two\nlines") == "two lines"


def test_without_a_connection_the_notifier_is_a_log_line(tmp_path, monkeypatch, caplog):
    from clwl_alerts import NightlyNotifier, send

    monkeypatch.setenv("CLWL_LAKE", str(tmp_path / "lake"))
    monkeypatch.delenv("AIRFLOW_CONN_CLWL_SLACK", raising=False)
    with caplog.at_level("WARNING", logger="clwl_alerts"):
        NightlyNotifier().notify({"dag_run": scheduled_run(), "ti": SimpleNamespace(task_id="replay"),
                                  "exception": RuntimeError("Spark did not start:\nthe JVM exited")})
        assert send("x") == "log"
    assert ("clwl: clwl_nightly failed at replay for 2026-11-20: Spark did not start: the JVM exited (report: "
            f"{tmp_path / 'lake' / 'reports'}/2026-11-20/report.html") in caplog.text


def test_the_deadline_alert(webhook, monkeypatch, tmp_path):
    """The DeadlineAlert on the nightly when CLWL_PUBLISH_BY is set: queued at 02:30 UTC, due by then (06:30: 4 h
    later; 02:00: the next day, 23 h 30 min later); none when it is not set (Airflow 3.3.2's dag.test() fails on a
    DAG with one). Its callback, with the context Airflow gives it (the run as the REST API's JSON), sends the
    message. The scheduler's own firing of a missed deadline is Airflow's, not exercised here."""
    from clwl_alerts import deadline_missed, publish_deadline

    from dagtest_support import load_dag

    assert publish_deadline("06:30") == dt.timedelta(hours=4)
    assert publish_deadline("02:00") == dt.timedelta(hours=23, minutes=30)
    with pytest.raises(ValueError, match="CLWL_PUBLISH_BY must be a time HH:MM"):
        publish_deadline("6h")
    monkeypatch.setenv("CLWL_PUBLISH_BY", "06:30")
    dag = load_dag("clwl_nightly", no_retries=False)
    alert = dag.deadline[0] if isinstance(dag.deadline, list) else dag.deadline
    assert alert.interval == dt.timedelta(hours=4) and alert.callback.path == "clwl_alerts.deadline_missed"
    assert all(type(t.on_failure_callback[0] if isinstance(t.on_failure_callback, list) else
                    t.on_failure_callback).__name__ == "NightlyNotifier" for t in dag.tasks)
    monkeypatch.delenv("CLWL_PUBLISH_BY")
    assert not load_dag("clwl_nightly", no_retries=False).deadline

    url, got = webhook
    monkeypatch.setenv("CLWL_LAKE", str(tmp_path / "lake"))
    monkeypatch.setenv("AIRFLOW_CONN_CLWL_SLACK", json.dumps({"conn_type": "slackwebhook", "password": url}))
    context = {"dag_run": {"dag_id": "clwl_nightly", "dag_run_id": "scheduled__2026-11-20T02:30:00+00:00",
                           "run_type": "scheduled", "state": "running", "conf": {},
                           "logical_date": "2026-11-20T02:30:00Z", "data_interval_start": "2026-11-20T02:30:00Z",
                           "run_after": "2026-11-21T02:30:00Z"},
               "deadline": {"deadline_time": "2026-11-21T06:30:00+00:00"}}
    assert deadline_missed(context=context) == "slack"
    assert got == [{"text": "clwl: clwl_nightly is not published by its deadline for 2026-11-20: the run was still "
                            "running at 2026-11-21T06:30:00+00:00 (report: "
                            f"{tmp_path / 'lake' / 'reports'}/2026-11-20/report.html; Airflow run "
                            "scheduled__2026-11-20T02:30:00+00:00)"}]
