"""The DAGs run for real with dag.test() on a copy of samples/landing: the nightly DAG publishes what `clwl run`
(spark.pipeline.run_pipeline) publishes on the same inputs, the gold Assets trigger the reports DAG, an ad-hoc
what-if run changes only its what-if tables, and a failing quality gate fails the run visibly.

All tasks run in this process and share one local Spark session (the `spark` fixture): one JVM for the session.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from types import SimpleNamespace

import pytest

from tests.lake_compare import EMPTY_ON_SAMPLES
from dagtest_support import GOLD, ROOT, RUN_DATE, UTC, delta_versions, load_dag, run_state, task_states

pytestmark = [pytest.mark.airflow, pytest.mark.spark, pytest.mark.slow]

# Differ between runs by design: the run id (one per DAG run / `clwl run`), wall-clock times, result folder.
VOLATILE = {"run_summary": ("run_id", "started_at", "finished_at", "validation_result")}


def metric_values(text: str) -> dict[str, float]:
    """The unlabelled samples of a metrics file, parsed as Prometheus text (prometheus_client's parser)."""
    from prometheus_client.parser import text_string_to_metric_families

    return {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples if not s.labels}


def xcom_of(dag_run, task_id: str):
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        row = (session.query(XComModel.value).filter(XComModel.dag_id == dag_run.dag_id,
                                                     XComModel.run_id == dag_run.run_id,
                                                     XComModel.task_id == task_id,
                                                     XComModel.key == "return_value").first())
    return None if row is None else (json.loads(row[0]) if isinstance(row[0], str) else row[0])


def recorded_run(lake) -> str:
    from clwl.lake.published import read_published

    return read_published(lake / "gold").dates[RUN_DATE]


def gold_frame(spark, lake, table):
    from pyspark.sql import functions as F

    df = spark.read.format("delta").load(str(lake / "gold" / table)).drop(*VOLATILE.get(table, ()))
    if "table_versions" in df.columns:  # a map: no set operations on it, so compare it as sorted JSON
        df = df.withColumn("table_versions", F.to_json(F.array_sort(F.map_entries("table_versions"))))
    return df


def asset_events(uri_prefix: str) -> list[tuple[str, dict]]:
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session

    with create_session() as session:
        rows = (session.query(AssetModel.uri, AssetEvent.extra).join(AssetModel, AssetEvent.asset_id == AssetModel.id)
                .filter(AssetModel.uri.startswith(uri_prefix)).all())
        return [(uri, dict(extra or {})) for uri, extra in rows]


@pytest.fixture(scope="module")
def reference_lake(nightly_run, samples_day_run):
    """`clwl run` for the same day on the same landing, into another lake: the session fixture samples_day_run
    (tests/conftest.py, shared with tests/spark/test_publish_atomic.py), run on samples/landing itself, of which
    the DAG reads a copy (source_file is relative to the landing root). A session fixture is set up before the
    module's, so that run comes before the nightly DAG; they share only the Spark session."""
    assert samples_day_run.config.landing.resolve() == (ROOT / "samples" / "landing").resolve()
    assert [d.run_date for d in samples_day_run.outcome.dates] == [RUN_DATE]
    return samples_day_run.config.lake


def test_nightly_publishes_what_clwl_run_publishes(nightly_run, reference_lake, spark):
    assert nightly_run["states"] == {t: "success" for t in ("ingest", "changed", "replay", "detect", "publish",
                                                             "report", "metrics")}
    assert run_state(nightly_run["dag_run"]) == "success"
    lake = nightly_run["lake"]
    for table in GOLD:
        got, want = gold_frame(spark, lake, table), gold_frame(spark, reference_lake, table)
        assert sorted(got.columns) == sorted(want.columns), table
        want = want.select(*got.columns)
        n = got.count()
        assert n == want.count() and (n > 0 or table in EMPTY_ON_SAMPLES), (table, n, want.count())
        if n == 0:
            continue
        assert got.exceptAll(want).count() == 0 and want.exceptAll(got).count() == 0, f"gold.{table} differs"
        days = {r[0].isoformat() for r in got.select("run_date").distinct().collect()}
        assert days == {RUN_DATE}, (table, days)  # the param's date only, though the landing has two days
    summary = spark.read.format("delta").load(str(lake / "gold" / "run_summary")).collect()[0]
    assert summary.status == "published" and summary.run_id.startswith("clwl_nightly__manual__")
    assert (lake / "reports" / RUN_DATE / "report.html").is_file()
    # One writer of the day's report: the nightly's task wrote the published run's (under the lake lock).
    assert xcom_of(nightly_run["dag_run"], "report")["run_id"] == summary.run_id
    # The `metrics` task wrote the day's Prometheus gauges to the file the Variable clwl_metrics_file names.
    gauges = metric_values(nightly_run["metrics_file"].read_text(encoding="utf-8"))
    assert gauges["clwl_publish_blocked"] == 0
    assert gauges["clwl_data_date_timestamp_seconds"] == dt.datetime(2026, 11, 20, tzinfo=UTC).timestamp()
    assert gauges["clwl_messages_replayed"] == summary.messages_replayed


def test_publish_emits_gold_asset_events_that_queue_the_reports_dag(nightly_run):
    from airflow.models.asset import AssetDagRunQueue, AssetModel
    from airflow.utils.session import create_session

    lake = nightly_run["lake"]
    events = asset_events(f"file://{lake}/gold/")
    assert sorted(uri for uri, _ in events) == sorted(f"file://{lake}/gold/{t}" for t in GOLD)
    # the first publish: version 0 is each table created empty with its constraints, version 1 the date's rows
    for uri, extra in events:
        assert extra["run_date"] == RUN_DATE and extra["table_uri"] == uri and extra["delta_version"] == 1
    with create_session() as session:
        queued = (session.query(AssetModel.uri).join(AssetDagRunQueue, AssetDagRunQueue.asset_id == AssetModel.id)
                  .filter(AssetDagRunQueue.target_dag_id == "clwl_reports").all())
    assert sorted(u for (u,) in queued) == sorted(uri for uri, _ in events)


def test_nightly_leaves_a_lineage_file_whose_events_share_the_task_runs_ids(nightly_run):
    """The nightly's events (docs/lineage.md) in <lake>/lineage/<run id>.jsonl: each stage task's START and COMPLETE
    under the task instance's OpenLineage run as the provider names it (its adapter's ids from the DAG id, task
    id, try number and logical date), the DAG run as root; the publish names every gold table at the version
    written (1: version 0 is the table created empty) with the gate's assertions, all passed."""
    from airflow.providers.openlineage.plugins.adapter import OpenLineageAdapter
    from openlineage.client.event_v2 import RunState

    from clwl.lake.door import Lake
    from clwl.lake.lineage_stages import lineage_file
    from clwl_dag_support import pipeline_run_id

    dag_run, lake = nightly_run["dag_run"], Lake(nightly_run["lake"])
    path = lineage_file(lake, pipeline_run_id({"dag_run": dag_run}))
    events = [json.loads(line) for line in path.read_text().splitlines()]
    jobs = [(e["job"]["name"], e["eventType"]) for e in events]
    for stage in ("ingest", "replay", "detect", "publish", "report"):
        assert jobs.count((f"clwl.{stage}", "START")) == jobs.count((f"clwl.{stage}", "COMPLETE")) == 1, stage
    tis = {ti.task_id: ti for ti in dag_run.get_task_instances()}
    for e in events:
        task = e["job"]["name"].removeprefix("clwl.")
        ti = tis[task]
        parent = e["run"]["facets"]["parent"]
        assert parent["job"]["name"] == f"clwl_nightly.{task}" and parent["root"]["job"]["name"] == "clwl_nightly"
        assert parent["run"]["runId"] == OpenLineageAdapter.build_task_instance_run_id(
            dag_id="clwl_nightly", task_id=task, try_number=ti.try_number, logical_date=dag_run.logical_date,
            map_index=ti.map_index)
        assert parent["root"]["run"]["runId"] == OpenLineageAdapter.build_dag_run_id(
            dag_id="clwl_nightly", logical_date=dag_run.logical_date, clear_number=dag_run.clear_number)
    publish = next(e for e in events if e["job"]["name"] == "clwl.publish" and e["eventType"] == "COMPLETE")
    assert RunState[publish["eventType"]] is RunState.COMPLETE
    assert publish["run"]["facets"]["clwlGate"]["published"] is True
    gold = {o["name"].rsplit("/", 1)[-1]: o for o in publish["outputs"] if "/gold/" in o["name"]}
    assert sorted(gold) == sorted(GOLD)
    for o in gold.values():
        assert o["facets"]["version"]["datasetVersion"] == "1"
        assertions = o["facets"]["dataQualityAssertions"]["assertions"]
        assert assertions and all(a["success"] for a in assertions)


def test_a_nightly_rerun_with_nothing_new_publishes_nothing(nightly_run):
    """The same night again: the landing files are those the first run ingested and the code is the same, so
    the date's inputs are those its published run recorded (gold/_published.json "inputs", written by the
    first run's publish from what its replay read): `changed` short-circuits, replay, detect, publish and
    report are skipped, and no gold table gains a version."""
    from clwl.lake.published import read_published

    lake = nightly_run["lake"]
    recorded = read_published(lake / "gold").inputs[RUN_DATE]
    assert recorded["silver.message_events"] != "absent" and "code" in recorded
    before = delta_versions(lake / "gold")
    dag_run = load_dag("clwl_nightly").test(logical_date=dt.datetime(2026, 11, 20, 1, tzinfo=UTC),
                                            run_conf={"run_date": RUN_DATE})
    assert task_states(dag_run) == {"ingest": "success", "changed": "success", "replay": "skipped",
                                    "detect": "skipped", "publish": "skipped", "report": "skipped",
                                    "metrics": "skipped"}
    assert delta_versions(lake / "gold") == before
    assert read_published(lake / "gold").inputs[RUN_DATE] == recorded
    # The ingest answered from `clwl run`'s own check (spark.pipeline.unchanged_run), before it would have asked
    # for a Spark session: its result carries the published run, no ingest run of its own.
    assert xcom_of(dag_run, "ingest") == {"run_date": RUN_DATE, "unchanged_since": recorded_run(lake)}


def test_a_date_without_landing_folder_is_skipped_at_once(nightly_run, capfd):
    """A night whose landing folder is not there: ingest is skipped with one line naming the folder, the rest
    skipped after it, no retry, the lake untouched (it used to fail and retry for 15 minutes)."""
    lake = nightly_run["lake"]
    before = delta_versions(lake)
    capfd.readouterr()
    dag_run = load_dag("clwl_nightly").test(
        logical_date=dt.datetime(2026, 11, 25, tzinfo=UTC))  # the rule: a manual trigger's logical date
    log = capfd.readouterr()
    states = task_states(dag_run)
    assert states["ingest"] == "skipped" and run_state(dag_run) == "success", states
    assert {states[t] for t in ("changed", "replay", "detect", "publish", "report")} == {"skipped"}
    landing = nightly_run["lake"].parent / "landing" / "2026-11-25"
    assert f"no landing folder {landing} for run date 2026-11-25" in log.out + log.err
    assert delta_versions(lake) == before


def test_reports_dag_rewrites_the_report(nightly_run):
    """A manual clwl_reports run writes the date's report again, as the published run's (the pointer names it:
    never a blank "Run ``"), under the lake lock; its marker names that run."""
    from clwl.lake.reports import report_made_for

    folder = nightly_run["lake"] / "reports" / RUN_DATE
    published_run = recorded_run(nightly_run["lake"])
    report = folder / "report.html"
    report.unlink()
    dag_run = load_dag("clwl_reports").test(logical_date=dt.datetime(2026, 11, 21, 3, tzinfo=UTC),
                                            run_conf={"run_date": RUN_DATE})
    assert task_states(dag_run) == {"report": "success"}
    assert report.is_file() and RUN_DATE in report.read_text(encoding="utf-8")
    assert f"Run `{published_run}`" in (folder / "summary.md").read_text(encoding="utf-8")
    assert report_made_for(nightly_run["lake"] / "reports", RUN_DATE) == published_run
    assert xcom_of(dag_run, "report")["run_id"] == published_run


def test_reports_dag_for_a_date_never_published_says_so_and_writes_nothing(nightly_run, capfd):
    """2026-11-19 is in the landing folder but was never published: a manual clwl_reports run for it is skipped
    with one line saying so, and writes no report (it used to write "No channel trouble ... Run ``")."""
    reports = nightly_run["lake"] / "reports"
    before = sorted(p.relative_to(reports).as_posix() for p in reports.rglob("*"))
    capfd.readouterr()
    dag_run = load_dag("clwl_reports").test(logical_date=dt.datetime(2026, 11, 21, 4, tzinfo=UTC),
                                            run_conf={"run_date": "2026-11-19"})
    log = capfd.readouterr()
    assert task_states(dag_run) == {"report": "skipped"}
    assert f"2026-11-19 has not been published in {nightly_run['lake']}: no report written" in log.out + log.err
    assert sorted(p.relative_to(reports).as_posix() for p in reports.rglob("*")) == before


def test_adhoc_what_if_changes_only_the_what_if_tables(nightly_run, spark):
    lake = nightly_run["lake"]
    before = delta_versions(lake, exclude=("whatif/",))
    events_before = asset_events("file://")
    conf = {"run_date": RUN_DATE, "whatif_name": "qm2-w20", "channel_attrs": {"TO.QM2": {"CLWLWGHT": "20"}}}

    dag_run = load_dag("clwl_adhoc").test(logical_date=dt.datetime(2026, 11, 21, 12, tzinfo=UTC), run_conf=conf)

    assert task_states(dag_run) == {"plan": "success", "ingest": "skipped", "replay": "success",
                                    "detect": "success", "gate": "success", "publish": "skipped",
                                    "publish_whatif": "success", "report": "success"}
    assert delta_versions(lake, exclude=("whatif/",)) == before  # gold, silver, bronze, staging: untouched
    assert asset_events("file://") == events_before  # no gold asset event from a what-if
    out = lake / "whatif" / "qm2-w20"
    assert (out / "reports" / RUN_DATE / "report.html").is_file()
    published = spark.read.format("delta").load(str(lake / "gold" / "routing_replay"))
    whatif = spark.read.format("delta").load(str(out / "gold" / "routing_replay"))
    assert whatif.count() == published.count()
    assert whatif.exceptAll(published).count() > 0, "the what-if replay is the same as the published one"

    def to_qm2(df):
        return df.where("final_qmgr = 'QM2'").count()

    assert to_qm2(whatif) < to_qm2(published), "CLWLWGHT 20 (others 50) should send fewer messages to QM2"


@pytest.mark.parametrize("conf", [
    {"whatif_name": "w", "channel_attrs": {"TO.QM2": {"CLWLWGHT": "abc"}}},
    {"whatif_name": "w", "channel_attrs": {"TO.QM2": {"CLWLWGHT": 12345678901234567890}}},
])
def test_adhoc_refuses_an_out_of_range_what_if_when_triggered(nightly_run, conf):
    """The params carry the what-if schema: a value out of MQ's range is refused when the run is triggered."""
    from airflow.sdk.exceptions import ParamValidationError

    lake = nightly_run["lake"]
    before = delta_versions(lake)
    with pytest.raises(ParamValidationError, match="channel_attrs"):
        load_dag("clwl_adhoc").test(logical_date=dt.datetime(2026, 11, 21, 13, tzinfo=UTC),
                                    run_conf={"run_date": RUN_DATE, **conf})
    assert delta_versions(lake) == before


@pytest.mark.parametrize("conf", [
    {"channel_attr": {"TO.QM2": {"CLWLWGHT": 20}}},  # a typo of channel_attrs
    {"whatif_name": "w", "channel_attrs": {"TO.QM9": {"CLWLWGHT": 20}}},  # no such channel that day
])
def test_adhoc_with_a_bad_what_if_fails_at_plan_and_never_republishes(nightly_run, conf, capfd):
    """What the schema cannot see (an unknown param, a name the day does not know) fails the plan task with one
    line: nothing is ingested, replayed or republished (the published tables' Delta versions do not move),
    never a plain re-run."""
    lake = nightly_run["lake"]
    before = delta_versions(lake)
    capfd.readouterr()
    dag_run = load_dag("clwl_adhoc").test(logical_date=dt.datetime(2026, 11, 21, 13, tzinfo=UTC),
                                          run_conf={"run_date": RUN_DATE, **conf})
    log = capfd.readouterr()
    states = task_states(dag_run)
    assert states["plan"] == "failed" and run_state(dag_run) == "failed", states
    assert all(states[t] in ("upstream_failed", "skipped", None) for t in states if t != "plan"), states
    assert delta_versions(lake) == before
    assert "clwl_adhoc: " in log.out + log.err


def test_failing_quality_gate_fails_the_run_and_names_the_expectation(nightly_run, spark, tmp_path, capfd, caplog):
    """Stage a broken day (a duplicated msg_id in the staged routing_replay) in a copy of the lake, point the
    `clwl_lake` Variable at it, and run the nightly DAG with ingest/replay/detect marked successful: publish
    must fail (no retry), name the failed expectation and the validation results, and leave gold as it was."""
    from airflow.models.dagrun import DagRun
    from airflow.models.variable import Variable
    from airflow.utils.types import DagRunType
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from clwl_dag_support import pipeline_run_id

    lake = tmp_path / "lake"
    shutil.copytree(nightly_run["lake"], lake, ignore=shutil.ignore_patterns("whatif", "reports"))
    logical = run_after = dt.datetime(2026, 11, 22, 2, 30, tzinfo=UTC)
    airflow_run_id = DagRun.generate_run_id(run_type=DagRunType.MANUAL, logical_date=logical, run_after=run_after)
    run_id = pipeline_run_id({"dag_run": SimpleNamespace(dag_id="clwl_nightly", run_id=airflow_run_id)})

    staged = str(lake / "staging" / "routing_replay")
    spark.read.format("delta").load(staged).limit(1).write.format("delta").mode("append").save(staged)
    DeltaTable.forPath(spark, str(lake / "staging" / "run_summary")).update(set={"run_id": F.lit(run_id)})
    gold_before = delta_versions(lake / "gold")

    Variable.set("clwl_lake", str(lake))  # the Variable wins over CLWL_LAKE (still the nightly_run lake)
    metrics_file = tmp_path / "clwl.prom"
    Variable.set("clwl_metrics_file", str(metrics_file))
    try:
        capfd.readouterr()
        dag_run = load_dag("clwl_nightly").test(logical_date=logical, run_after=run_after,
                                                run_conf={"run_date": RUN_DATE},
                                                mark_success_pattern="ingest|changed|replay|detect")
        out = capfd.readouterr()
    finally:
        Variable.delete("clwl_lake")
        Variable.delete("clwl_metrics_file")

    assert dag_run.run_id == airflow_run_id
    assert task_states(dag_run) == {"ingest": "success", "changed": "success", "replay": "success",
                                    "detect": "success", "publish": "failed", "report": "upstream_failed",
                                    "metrics": "success"}
    assert run_state(dag_run) == "failed"  # report, a leaf, did not run: the night stays failed
    # The gauges after the blocked night: the gate blocked the date, the last good day stays the one shown.
    gauges = metric_values(metrics_file.read_text(encoding="utf-8"))
    assert gauges["clwl_publish_blocked"] == 1
    assert gauges["clwl_data_date_timestamp_seconds"] == dt.datetime(2026, 11, 20, tzinfo=UTC).timestamp()
    assert delta_versions(lake / "gold") == gold_before  # the last good version stays published
    result = json.loads((lake / "validation" / run_id / "_publish.json").read_text())
    assert result["published"] is False
    assert any(f.startswith("gold.routing_replay: expect_compound_columns_to_be_unique") for f in result["failures"])
    log = out.out + out.err
    assert "AirflowFailException" in log and f"quality gate blocked publishing {RUN_DATE}" in log
    assert "gold.routing_replay: expect_compound_columns_to_be_unique (run_date, msg_id)" in log
    assert f"Validation results: {lake / 'validation' / run_id}" in log
    # The notifier told somebody (a log line here: no clwl_slack connection): the date, the gate's reason, the
    # report's place in the Variable's lake.
    # report's place in the Variable's lake. Read from the log records: the callback's line may still sit in
    # stdout's buffer when capfd reads the file descriptor.
    alerts = [r.getMessage() for r in caplog.records if r.name == "clwl_alerts"]
    assert len(alerts) == 1, alerts
    assert alerts[0].startswith(f"clwl: clwl_nightly was blocked by the quality gate for {RUN_DATE}: quality gate "
                                f"blocked publishing {RUN_DATE} (run {run_id})")
    assert alerts[0].endswith(f"(report: {lake / 'reports'}/{RUN_DATE}/report.html; Airflow run {airflow_run_id})")
