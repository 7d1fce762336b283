"""clwl_adhoc: a manual run for one day, either republishing it or as a what-if.

Params (validated by their JSON schema when the run is triggered): `run_date` (required), `cluster`,
`sending_qmgrs`, `profile` (default|legacy|mq9), `whatif_name`, and the what-if overrides `channel_attrs`,
`suspend`, `channel_state`, `queue_attrs` (see clwl/analyses/whatif.py).

- Without overrides, narrowing or a what-if name: ingest the day, replay, detect, validate and republish it to
  the gold tables (emitting the gold asset events, like clwl_nightly).
- Otherwise a what-if run: it reads the existing silver tables (no ingest) and writes its staged tables, its
  gold tables, its validation results and its report under <lake>/whatif/<name>/ only. The published tables
  are never touched and no gold asset event is emitted.

    airflow dags trigger clwl_adhoc --conf '{"run_date": "2026-11-20", "whatif_name": "qm2-w20",
        "channel_attrs": {"TO.QM2": {"CLWLWGHT": "20"}}}'
"""

from __future__ import annotations

import datetime as dt

from airflow.sdk import dag, get_current_context, task

from clwl_dag_support import (
    ADHOC_PARAMS,
    DEFAULT_ARGS,
    TAGS_BASE,
    adhoc_plan,
    annotate_gold_events,
    gold_assets,
    ingest_day,
    lake_writer,
    pipeline_config,
    pipeline_run_id,
    publish_or_fail,
    replay_inputs,
    report_published_day,
    spark_session,
)


def _plan():
    """(run, run_date) of the running task, from its params."""
    from clwl.analyses.whatif import WhatIf
    from spark.run import PipelineRun

    context = get_current_context()
    plan = adhoc_plan(context["params"])
    whatif = WhatIf.from_dict(plan["whatif"]) if plan["whatif"] else None
    run = PipelineRun(pipeline_config(), pipeline_run_id(context), plan["profile"], whatif, plan["senders"],
                      plan["cluster"])
    return run, plan["run_date"]


@dag(
    dag_id="clwl_adhoc",
    schedule=None,
    start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    catchup=False,
    max_active_runs=1,  # plain re-runs share <lake>/staging with each other
    default_args=DEFAULT_ARGS,
    tags=[*TAGS_BASE, "adhoc", "what-if"],
    params=ADHOC_PARAMS,
    doc_md=__doc__,
)
def clwl_adhoc():
    @task.branch
    def plan() -> list[str]:
        """Validate the params into a plan; a plain re-run ingests first, a what-if skips ingest (it reads the
        silver tables as they are and writes nothing outside its what-if folder)."""
        from airflow.sdk.exceptions import AirflowFailException

        try:
            p = adhoc_plan(get_current_context()["params"])
            if p["whatif"]:  # names the day's configuration does not know: refused, as `clwl run --what-if`
                from clwl.analyses.whatif import WhatIf
                from spark.pipeline import check_whatif

                check_whatif(pipeline_config(), [p["run_date"]], WhatIf.from_dict(p["whatif"]))
        except ValueError as exc:  # a typo or an out-of-range override: fail here, never run as a re-run
            raise AirflowFailException(f"clwl_adhoc: {exc}") from None
        return ["replay"] if p["whatif"] else ["ingest", "replay"]

    @task
    def ingest() -> dict:
        run, run_date = _plan()
        return ingest_day(run.config, run_date)

    @task(trigger_rule="none_failed_min_one_success")
    def replay() -> dict:
        from spark.stages import replay_stage

        run, run_date = _plan()
        with lake_writer(run.config):
            n = replay_stage(spark_session(run.config), run, run_date)
            inputs = replay_inputs(run, run_date)
        return {"run_date": run_date, "whatif": run.whatif.name if run.whatif else None, "messages": n,
                "inputs": inputs}

    @task
    def detect() -> dict:
        from spark.stages import detect_stage

        run, run_date = _plan()
        started = get_current_context()["dag_run"].start_date
        with lake_writer(run.config):
            counts = detect_stage(spark_session(run.config), run, run_date, started_at=started)
        return {"run_date": run_date, "run_id": run.run_id, "whatif": run.whatif.name if run.whatif else None,
                **counts}

    @task.branch
    def gate() -> str:
        return "publish_whatif" if adhoc_plan(get_current_context()["params"])["whatif"] else "publish"

    @task(outlets=gold_assets())
    def publish() -> dict:
        """Republish the day to gold (quality gate); emits the gold asset events."""
        run, run_date = _plan()
        replayed = get_current_context()["ti"].xcom_pull(task_ids="replay") or {}
        result = publish_or_fail(run, run_date, replayed.get("inputs"))
        annotate_gold_events(run.config, run_date, run.run_id, result["table_versions"],
                             get_current_context()["outlet_events"])
        return result

    @task
    def publish_whatif() -> dict:
        """Quality gate and publish into <lake>/whatif/<name>/gold: no outlets, the published tables stay."""
        run, run_date = _plan()
        replayed = get_current_context()["ti"].xcom_pull(task_ids="replay") or {}
        return {**publish_or_fail(run, run_date, replayed.get("inputs")), "whatif": run.whatif.name}

    @task(trigger_rule="none_failed_min_one_success")
    def report() -> dict:
        from spark.stages import report_stage

        run, run_date = _plan()
        if run.whatif is None:  # the published day's report: its one writer (clwl_dag_support)
            return {**report_published_day(run.config, run_date, rewrite=False), "whatif": None}
        html, md = report_stage(None, run, run_date)
        return {"run_date": run_date, "whatif": run.whatif.name if run.whatif else None, "report_html": html,
                "report_md": md}

    ingested, staged = ingest(), replay()
    plan() >> [ingested, staged]
    ingested >> staged >> detect() >> gate() >> [publish(), publish_whatif()] >> report()


clwl_adhoc()
