"""clwl_nightly: every night, ingest the landing folder of the previous day, replay, detect, validate, publish
and report, with the same spark/ functions `clwl run` calls.

Schedule: 02:30 UTC, as a data-interval cron timetable, so the run at 2026-11-21 02:30 covers the interval
starting 2026-11-20 02:30 and processes run date 2026-11-20. No catch-up, one active run at a time, two retries
with exponential backoff (a failed quality gate is not retried).

The run date, one rule (clwl_dag_support.choose_run_date; the run logs which date it chose and why): the
`run_date` in the conf; else, for a scheduled run or a backfill, the day its data interval starts; else, for a
manual trigger, the logical date when one was given (`--logical-date`, the REST API's `logical_date`); else the
previous complete UTC day (never today, a day still being written):

    airflow dags trigger clwl_nightly --conf '{"run_date": "2026-11-19"}'
    airflow dags trigger clwl_nightly --logical-date 2026-11-19T00:00:00+00:00

Write-audit-publish: replay and detect stage their tables under <lake>/staging/; `publish` validates them
(Great Expectations suites + cross-table checks) and only then writes <lake>/gold/. It declares the gold
tables as Assets (their table URIs: file:///<lake>/gold/<table>, or s3://bucket/prefix/gold/<table> for a
lake on an object store), which schedule clwl_reports. A blocked gate fails `publish` naming the failed
expectations and the validation results folder; gold keeps its last good version.

`changed` skips replay, detect, publish and report when the date's inputs (the silver rows it reads), the
options and the code are those its published run recorded (clwl/lake/fingerprint.py), as `clwl run` leaves such a
date: a re-run of a night that brought nothing new costs the ingest's check only.

A task that fails for good (after its retries; a blocked quality gate at once) notifies through
clwl_alerts.NightlyNotifier: the date, the reason in one line, the report's location, as a log line and, when the
connection `clwl_slack` (a Slack incoming webhook) is configured, on Slack. With CLWL_PUBLISH_BY (HH:MM UTC) set, an Airflow
DeadlineAlert sends the same kind of message when a run queued at 02:30 is not finished by then.

`metrics` runs after `publish` whatever its outcome: when the Variable `clwl_metrics_file` (or `clwl_pushgateway`)
is set, it writes the latest published day's Prometheus gauges there, as `clwl run --metrics-file` does
(docs/metrics.md), `clwl_publish_blocked 1` after a blocked gate.
"""

from __future__ import annotations

import datetime as dt

from airflow.sdk import CronDataIntervalTimetable, Param, dag, get_current_context, task
from clwl_alerts import NightlyNotifier, deadline_alert

from clwl_dag_support import (
    DATE_PATTERN,
    DEFAULT_ARGS,
    TAGS_BASE,
    annotate_gold_events,
    date_has_work,
    export_metrics,
    gold_assets,
    ingest_day,
    lake_writer,
    publish_or_fail,
    replay_inputs,
    report_published_day,
    run_context,
    spark_session,
)


@dag(
    dag_id="clwl_nightly",
    schedule=CronDataIntervalTimetable("30 2 * * *", timezone="UTC"),
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    max_active_runs=1,
    # A task that fails for good (a blocked gate included) tells somebody: a log line, Slack when configured.
    default_args={**DEFAULT_ARGS, "on_failure_callback": NightlyNotifier()},
    deadline=deadline_alert(),  # when CLWL_PUBLISH_BY (HH:MM UTC) is set: not published by then, the same message
    dagrun_timeout=dt.timedelta(hours=6),
    tags=[*TAGS_BASE, "nightly", "publish"],
    params={
        "run_date": Param(None, type=["null", "string"], format="date", pattern=DATE_PATTERN, title="Run date",
                          description="The day to process (YYYY-MM-DD); default: the scheduled run's data "
                                      "interval, a manual trigger's logical date, else yesterday (UTC)."),
    },
    doc_md=__doc__,
)
def clwl_nightly():
    @task
    def ingest() -> dict:
        """Landing folder of the run date -> bronze/silver (incremental: unchanged files are skipped)."""
        run, run_date = run_context()
        return ingest_day(run.config, run_date)

    @task.short_circuit
    def changed() -> bool:
        """Skip the rest when the date's inputs, options and code are those its published run recorded."""
        run, run_date = run_context()
        return date_has_work(run, run_date)

    @task
    def replay() -> dict:
        from spark.stages import replay_stage

        run, run_date = run_context()
        with lake_writer(run.config):
            return {"run_date": run_date, "messages": replay_stage(spark_session(run.config), run, run_date),
                    "inputs": replay_inputs(run, run_date)}

    @task
    def detect() -> dict:
        from spark.stages import detect_stage

        run, run_date = run_context()
        started = get_current_context()["dag_run"].start_date
        with lake_writer(run.config):
            counts = detect_stage(spark_session(run.config), run, run_date, started_at=started)
        return {"run_date": run_date, "run_id": run.run_id, **counts}

    @task(outlets=gold_assets())
    def publish() -> dict:
        """The quality gate; the gold tables are this task's outlets."""
        run, run_date = run_context()
        replayed = get_current_context()["ti"].xcom_pull(task_ids="replay") or {}
        result = publish_or_fail(run, run_date, replayed.get("inputs"))
        annotate_gold_events(run.config, run_date, run.run_id, result["table_versions"],
                             get_current_context()["outlet_events"])
        return result

    @task
    def report() -> dict:
        """The published day's report, under the lake lock (clwl_reports, triggered by the same publish, may
        have written it first)."""
        run, run_date = run_context()
        return report_published_day(run.config, run_date, rewrite=False)

    @task(trigger_rule="all_done")
    def metrics() -> dict:
        """The Prometheus gauges of the latest published day, after the publish, a blocked one too (a leaf beside
        `report`, which keeps a blocked night's run failed)."""
        run, _ = run_context()
        return export_metrics(run.config)

    published = publish()
    ingest() >> changed() >> replay() >> detect() >> published >> report()
    published >> metrics()


clwl_nightly()
