"""clwl_reports: (re)write the HTML/Markdown report whenever the published gold tables change.

Scheduled on the gold Assets (file:///<lake>/gold/<table>, or s3://bucket/prefix/gold/<table> for a lake on an
object store) that clwl_nightly's and clwl_adhoc's `publish` tasks produce. The report is for the latest run date
among the triggering asset events (each event's extra carries run_date and run_id); a manual run takes the
`run_date` param. The report is the published run's (the published pointer names it), written under the lake
lock, so it and the nightly's `report` task never write a date's files at once; after a publish it is left as it
is when the nightly wrote it first, a manual run writes it again, and a date never published is skipped with a
message. It reads the published tables with deltalake and pandas (spark.report), so no Spark session is
started. What-if runs never trigger it: they produce no gold asset events.
"""

from __future__ import annotations

import datetime as dt

from airflow.sdk import Param, dag, get_current_context, task

from clwl_dag_support import (
    DATE_PATTERN,
    DEFAULT_ARGS,
    TAGS_BASE,
    check_date,
    gold_assets,
    pipeline_config,
    report_published_day,
)


@dag(
    dag_id="clwl_reports",
    schedule=gold_assets(),  # all four: publish writes them together
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    tags=[*TAGS_BASE, "report", "assets"],
    params={
        "run_date": Param(None, type=["null", "string"], format="date", pattern=DATE_PATTERN, title="Run date",
                          description="For a manual run: the published day to report on (YYYY-MM-DD)."),
    },
    doc_md=__doc__,
)
def clwl_reports():
    @task
    def report() -> dict:
        from airflow.sdk.exceptions import AirflowFailException

        context = get_current_context()
        manual = bool(context["params"].get("run_date"))
        if manual:
            run_date = check_date(context["params"]["run_date"])
        else:
            dates = [str(event.extra["run_date"])
                     for events in (context.get("triggering_asset_events") or {}).values()
                     for event in events if (event.extra or {}).get("run_date")]
            run_date = max(dates) if dates else None
        if run_date is None:
            raise AirflowFailException("no run date: trigger with the run_date param, or let a publish of the "
                                       "gold tables trigger this DAG")
        # The published pointer names the run; a manual run writes the report again, an asset-triggered one
        # leaves it when the nightly's report task wrote it already.
        return report_published_day(pipeline_config(), run_date, rewrite=manual)

    report()


clwl_reports()
