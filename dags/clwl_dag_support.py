"""Shared wiring for the clwl DAGs (not a DAG file: `.airflowignore` keeps the DAG processor from parsing it).

Parse-time cheap on purpose: it imports only `airflow.sdk` and `spark.config` (no pyspark, no Great
Expectations, no file or database access). Everything that touches Spark or the lake is imported inside the
task functions, at run time.

Configuration, at run time: the Airflow Variables `clwl_lake`, `clwl_landing`, `clwl_spark_master`,
`clwl_spark_remote` (which also come from `AIRFLOW_VAR_CLWL_LAKE`, ... or a secrets backend), else the environment
`CLWL_LAKE`, `CLWL_LANDING`, `CLWL_SPARK_MASTER`, `CLWL_SPARK_REMOTE`, else the defaults (lake `<checkout>/lake`,
landing `<checkout>/samples/landing`, `local[2]`, no remote). None of them is a credential. With a remote
(`sc://127.0.0.1:15002`, `python -m spark.connect_server`), every task attaches to that one long-lived Spark
application instead of starting a JVM of its own.

The lake is a local (or mounted) folder or a prefix of an object store (`s3://bucket/prefix`, with the `AWS_*`
variables of docs/object-storage.md in the environment of every task and Spark process). The gold Assets are
named by their table URIs: `file:///<lake>/gold/<table>` for a local lake, `s3://bucket/prefix/gold/<table>` for
one on a store. An Asset must be known when the DAG file is parsed, and Variables are not read at parse time, so
the URIs use the environment's lake (`CLWL_LAKE`, else `<checkout>/lake`); a `clwl_lake` Variable that points
elsewhere still works (the tasks write where it says), and the publish task logs the mismatch and records the
real table URIs in each event's extra.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from airflow.sdk import Asset, Param, Variable, get_current_context
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from clwl.analyses.whatif import (
    CHANNEL_ATTRS_SCHEMA,
    CHANNEL_STATE_SCHEMA,
    NAME_PATTERN,
    QUEUE_ATTRS_SCHEMA,
    SUSPEND_SCHEMA,
    WhatIf,
)
from clwl.days import RUN_DATE_NAME
from clwl.lake.door import GOLD_TABLES, Lake, default_lake_location
from clwl.lake.storage import LakeLocation, absolute_location, lake_root, location_uri
from clwl.landing.layout import MQ_NAME_PATTERN  # MQ object names (queue managers, clusters)
from spark.config import REPO_ROOT, PipelineConfig
from spark.run import PipelineRun

log = logging.getLogger(__name__)

PROFILES = ("default", "legacy", "mq9")  # = sorted(clwl.engine.algorithm.PROFILES); tests/dags checks both
TAGS_BASE = ["clwl", "mq"]

VARIABLES = {"lake": "clwl_lake", "landing": "clwl_landing", "master": "clwl_spark_master", "remote": "clwl_spark_remote"}

# Retries for the Spark tasks: transient failures (a Spark master restarting, a lake volume hiccup) are retried
# after 5 min, then 10 min (exponential backoff, multiplier 2, capped at 1 h). A failed quality gate is not
# retried: it raises AirflowFailException.
DEFAULT_ARGS = {
    "owner": "clwl",
    "retries": 2,
    "retry_delay": dt.timedelta(minutes=5),
    "retry_exponential_backoff": 2.0,
    "max_retry_delay": dt.timedelta(hours=1),
}

# \A and \Z, not ^ and $: "$" also matches before a final newline ("2026-11-20\n" passed).
DATE_PATTERN = RUN_DATE_NAME.pattern  # a run date, as clwl.days.RunDate checks it


# ------------------------------------------------------------------------------------------------ parse time
def env_lake() -> Path | LakeLocation:
    """The DAGs' lake when no Variable names one: CLWL_LAKE, else <checkout>/lake (what `clwl run` uses from the
    checkout, whatever the worker's cwd): clwl.lake.door.default_lake_location with the checkout as its base. A local
    lake is made absolute; `s3://bucket/prefix` is a LakeLocation as given (a typo of one: StorageError, one line,
    when the DAG file is parsed)."""
    lake = default_lake_location(REPO_ROOT)
    return absolute_location(lake)


def parse_time_lake() -> Path | LakeLocation:
    """The lake the Asset URIs name: CLWL_LAKE, else <checkout>/lake (environment only: no Variable lookups)."""
    return env_lake()


def table_uri(lake: Path | str | LakeLocation, table: str, layer: str = "gold") -> str:
    """A table's URI: `file:///<lake>/<layer>/<table>` for a local lake, `s3://bucket/prefix/<layer>/<table>` for
    one on an object store (the URI Spark, deltalake and the clwl commands take)."""
    location = Lake(lake).table(layer, table)
    return location_uri(location)


def gold_assets(lake: Path | str | LakeLocation | None = None) -> list[Asset]:
    """One Asset per published gold table, named (and addressed) by its table URI."""
    lake = parse_time_lake() if lake is None else lake
    return [Asset(table_uri(lake, t)) for t in GOLD_TABLES]


# ------------------------------------------------------------------------------------------------ run time
def pipeline_config() -> PipelineConfig:
    """Airflow Variables, else the environment, else the defaults (see the module docstring)."""
    overrides: dict[str, Any] = {}
    for name, key in VARIABLES.items():
        value = Variable.get(key, default=None)
        if value is not None and str(value).strip():
            overrides[name] = str(value).strip()
    if "lake" not in overrides:
        overrides["lake"] = env_lake()
    return PipelineConfig.from_env(**overrides)


class RunDateError(AirflowFailException, ValueError):
    """A run_date that is no date: the task fails at once, not retried, on one line. Also a ValueError, as
    adhoc_plan's other refusals of bad params are."""


def check_date(value: str) -> str:
    """`value` if it is a date written YYYY-MM-DD, else RunDateError."""
    from clwl.days import RunDate

    try:
        return str(RunDate(str(value)))
    except ValueError:
        raise RunDateError(f"run_date must be a date YYYY-MM-DD, got {value!r}") from None


#: Run types that take their day from the schedule: the data interval is the day's (a backfill's too).
SCHEDULE_RUN_TYPES = ("scheduled", "backfill")


def choose_run_date(*, requested: str | None, run_type: str, logical_date: dt.datetime | None,
                    data_interval_start: dt.datetime | None, run_after: dt.datetime | None) -> tuple[str, str]:
    """The one rule for the day a DAG run processes, and why (for the run's log). Pure: no Airflow context.

    1. a `run_date` in the run's conf (or params): that day;
    2. a scheduled run, or a backfill's: the UTC date of its data interval's start, the previous complete day
       (the 02:30 run of 11-21 covers 11-20 02:30 to 11-21 02:30: run date 11-20);
    3. any other run (a manual trigger) with a logical date given explicitly (`airflow dags trigger
       --logical-date`, the REST API's `logical_date`): that logical date's UTC day. Its data interval is not
       used: for a manual trigger Airflow infers it from the time of the trigger, not from the logical date;
    4. otherwise (a manual trigger without a date): the previous complete UTC day before the trigger, as the
       schedule would, never today's, a day still being written.
    """
    def utc_day(when: dt.datetime) -> dt.date:
        return (when.astimezone(dt.timezone.utc) if when.tzinfo is not None else when).date()

    run_type = str(getattr(run_type, "value", run_type) or "")
    if requested:
        return check_date(requested), "the run_date given with the run"
    if run_type in SCHEDULE_RUN_TYPES and data_interval_start is not None:
        return utc_day(data_interval_start).isoformat(), f"the {run_type} run's data interval starts that day"
    if run_type not in SCHEDULE_RUN_TYPES and logical_date is not None:
        return utc_day(logical_date).isoformat(), "the logical date given with the trigger"
    if run_after is None:
        raise ValueError("no run_date, data interval, logical date or trigger time to take the run date from")
    day = utc_day(run_after) - dt.timedelta(days=1)
    return day.isoformat(), f"the previous complete UTC day before the trigger at {run_after:%Y-%m-%d %H:%M}"


def resolve_run_date(context: Mapping[str, Any]) -> str:
    """The day this task's run processes, by :func:`choose_run_date`; logged with its reason."""
    params = context.get("params") or {}
    dag_run = context.get("dag_run")
    conf = getattr(dag_run, "conf", None) or {}
    run_date, why = choose_run_date(
        requested=params.get("run_date") or conf.get("run_date"),
        run_type=getattr(dag_run, "run_type", "") or "",
        logical_date=getattr(dag_run, "logical_date", None),
        data_interval_start=getattr(dag_run, "data_interval_start", None) or context.get("data_interval_start"),
        run_after=getattr(dag_run, "run_after", None))
    log.info("run date %s: %s", run_date, why)
    return run_date


def pipeline_run_id(context: Mapping[str, Any]) -> str:
    """The pipeline's run id for this DAG run: stable across the run's tasks and their retries, so every task
    can derive it (nothing is passed through XCom), and safe as a folder name (<lake>/validation/<run_id>)."""
    dag_run = context["dag_run"]
    raw = f"{dag_run.dag_id}__{dag_run.run_id}"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.")


def run_context() -> tuple[PipelineRun, str]:
    """(run, run_date) of the running task."""
    context = get_current_context()
    lineage_parent(context["ti"])
    return PipelineRun(pipeline_config(), pipeline_run_id(context)), resolve_run_date(context)


def spark_log_file(base_log_folder: str | Path, dag_id: str, run_id: str, task_id: str, try_number: int) -> Path:
    """Where a task's JVM writes its own output (banner, log4j): beside the task logs, under Airflow's log folder
    (<AIRFLOW_HOME>/logs by default), one file a task try, cleaned up with the task logs."""
    def safe(text: str) -> str:  # a run id holds ":" and "+": not in a folder name
        return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-.") or "-"

    return (Path(base_log_folder) / "clwl-spark" / f"dag_id={safe(dag_id)}" / f"run_id={safe(run_id)}"
            / f"task_id={safe(task_id)}" / f"attempt={int(try_number)}.log")


def lineage_parent(task_instance) -> None:
    """The task instance's OpenLineage run, with the id the OpenLineage provider gives it (DAG id, task id, try
    number, logical date), as the parent of the task's stage events (docs/lineage.md); the DAG run is their root."""
    from clwl.lake.lineage import parent_facet
    from clwl.lake.lineage_stages import set_parent

    try:
        from airflow.providers.openlineage.plugins import macros

        set_parent(parent_facet(
            macros.lineage_run_id(task_instance), macros.lineage_job_namespace(),
            macros.lineage_job_name(task_instance),
            root=(macros.lineage_root_run_id(task_instance), macros.lineage_root_job_namespace(task_instance),
                  macros.lineage_root_job_name(task_instance))))
    except Exception as e:  # no provider, or a task instance it cannot name: the events go without a parent
        log.warning("lineage: no Airflow parent run for the events: %s", e)


def spark_session(config: PipelineConfig):
    """This task's Spark session (a task never hands a session to another task; in `dag.test()`, where tasks
    share a process, get_spark reuses the active one). The JVM's own output goes to :func:`spark_log_file`."""
    from airflow.sdk.configuration import conf

    from spark.session import SPARK_LOG_ENV, get_spark

    ti = get_current_context()["ti"]
    os.environ[SPARK_LOG_ENV] = str(spark_log_file(conf.get("logging", "base_log_folder"), ti.dag_id, ti.run_id,
                                                   ti.task_id, ti.try_number))

    # lake=: the session gets the S3A connector when the task's lake (a Variable may name it) is on a store.
    return get_spark(config.master, app_name=f"clwl-airflow-{ti.task_id}",
                     shown_output=config.verbose, remote=config.remote, lake=config.lake)


# A task that writes the lake holds its lock, <lake>/_lock (clwl/lake/lock.py), so that two DAG runs, or a DAG run
# and `clwl run`, never write at the same time. Unlike the CLI, which stops at once, a task waits for it (telling
# the log every minute), up to CLWL_LOCK_WAIT seconds when set, else LOCK_WAIT_SECONDS; then it fails (LakeBusy,
# naming the holder) and is retried like any transient failure.
LOCK_WAIT_SECONDS = 3600


@contextmanager
def lake_writer(config: PipelineConfig) -> Iterator[Lake]:
    """Hold the lake lock for the block (the writing part of a task), after rolling back a killed publish; the
    block gets the task's lake (its door, built here once)."""
    from clwl.lake.lock import WAIT_ENV, lake_lock

    ti = get_current_context()["ti"]
    wait = float(os.environ[WAIT_ENV]) if os.environ.get(WAIT_ENV, "").strip() else LOCK_WAIT_SECONDS
    with lake_lock(config.lake, purpose=f"airflow {ti.dag_id}.{ti.task_id}", wait=wait, progress=log.info):
        from spark.publish import settle_before_writing

        # A publish killed earlier is rolled back before this task writes; Spark starts here only when it must.
        lake = Lake(config.lake)
        settle_before_writing(lake, lambda: spark_session(config), log.info)
        yield lake


class NoLandingDate(AirflowSkipException):
    """The run date has no landing folder: the run is skipped at once, not retried (a night whose files never
    came would otherwise fail and retry for 15 minutes while manual runs queue behind it)."""


def landing_folder_or_skip(config: PipelineConfig, run_date: str) -> Path:
    """The run date's landing folder, <landing>/<date>; NoLandingDate naming it when it is not there."""
    folder = Path(config.landing) / run_date
    if not folder.is_dir():
        raise NoLandingDate(f"no landing folder {folder} for run date {run_date}: nothing to ingest, the run is "
                            f"skipped (trigger it again with that date once the files are there)")
    return folder


def ingest_day(config: PipelineConfig, run_date: str) -> dict:
    """The date's landing folder into bronze and silver. Skipped (NoLandingDate) when the folder is not there;
    without Spark when the date is as its published run left it and nothing new landed (`clwl run`'s own check,
    spark.pipeline.unchanged_run): `changed` then skips the rest, and no JVM starts for a night with nothing new."""
    from spark.pipeline import unchanged_run

    landing_folder_or_skip(config, run_date)
    unchanged = unchanged_run(config, [run_date], progress=log.info)
    if unchanged is not None:
        since = unchanged.dates[0].unchanged_since
        log.info("%s: nothing new to ingest, unchanged since run %s (no Spark started)", run_date, since)
        return {"run_date": run_date, "unchanged_since": since}

    from clwl.lake.lineage_stages import ingest_lineage
    from spark.ingest import ingest

    with lake_writer(config) as lake, ingest_lineage(lake, config.landing, pipeline_run_id(get_current_context()),
                                                     [run_date]):
        summary = ingest(config, [run_date], spark=spark_session(config), progress=log.info)
    return {"run_date": run_date, "ingest_run_id": summary.run_id, "files": len(summary.files),
            "files_rejected": summary.files_rejected, "records_read": summary.records_read,
            "records_accepted": summary.records_accepted, "records_quarantined": summary.records_quarantined}


def date_has_work(run: PipelineRun, run_date: str) -> bool:
    """False when the date's inputs, the run's options and the code are those its published run recorded
    (clwl/lake/fingerprint.py): the date stays as published, as `clwl run` leaves it, and the task says so. Its
    report is written again when it is not the published run's (a run killed between its publish and its report),
    as `clwl run` does."""
    from spark.pipeline import date_before_run, report_published_run

    day = date_before_run(run, run_date)
    if day.unchanged_since:
        log.info("%s: unchanged since %s, published as is", run_date, day.unchanged_since)
        if day.report_of is not None:
            with lake_writer(run.config):
                day = date_before_run(run, run_date)  # again, under the lock
                report_published_run(run, day, log.info)
        return False
    return True


def replay_inputs(run: PipelineRun, run_date: str) -> dict:
    """What the replay task read (clwl/lake/fingerprint.py), taken under the lake lock: the publish records it."""
    from clwl.lake.fingerprint import date_inputs

    return date_inputs(run.lake, run_date, run.options)


def publish_or_fail(run: PipelineRun, run_date: str, inputs: Mapping[str, str] | None = None) -> dict:
    """The quality gate: publish_stage, and when it blocks, fail the task (no retry) naming every failed
    expectation and the validation results. ``inputs``: what the replay read (:func:`replay_inputs`; None:
    taken now), recorded with the publish."""
    from airflow.sdk.exceptions import AirflowFailException

    from spark.stages import blocked_quality_docs, publish_stage

    run_id = run.run_id
    with lake_writer(run.config):
        res = publish_stage(spark_session(run.config), run, run_date,
                            dict(inputs) if inputs else replay_inputs(run, run_date))
        if not res.published and res.result_path:  # as `clwl run` does: the blocked run's Data Docs
            log.error("quality gate: %s", blocked_quality_docs(run, run_date, res.result_path))
    if not res.published:
        for failure in res.failures:
            log.error("quality gate: %s", failure)
        raise AirflowFailException(
            f"quality gate blocked publishing {run_date} (run {run_id}): {len(res.failures)} failed "
            f"expectation(s): {'; '.join(res.failures)}. Validation results: {res.result_path}. "
            f"The published tables keep their last good version.")
    return {"run_date": run_date, "run_id": run_id, "published": True, "validation_result": str(res.result_path),
            "table_versions": dict(res.table_versions)}


class NotPublished(AirflowSkipException):
    """A report asked for a date the lake never published: nothing is written (no empty report over another)."""


def report_published_day(config: PipelineConfig, run_date: str, *, rewrite: bool) -> dict:
    """The date's report, as its published run's, by the one writer of a date's report at a time: the nightly's
    `report` task, clwl_reports and `clwl run` all write it holding the lake lock, so two never write the same
    files at once. The run is the one the published pointer names for the date (never a blank one); NotPublished
    when it names none. ``rewrite`` False (the nightly, and clwl_reports after a publish): left as it is when the
    report there is already that run's, written by whichever came first; True (a manual clwl_reports): written
    again."""
    from clwl.lake.reports import report_made_for
    from spark.stages import report_stage

    with lake_writer(config) as lake:
        run_id = lake.published().dates.get(run_date)
        if not run_id:
            raise NotPublished(f"{run_date} has not been published in {config.lake}: no report written (run "
                               f"clwl_nightly for that date first)")
        if not rewrite and report_made_for(config.reports, run_date) == run_id:
            log.info("%s: the report of its published run %s is there already, left as it is", run_date, run_id)
            return {"run_date": run_date, "run_id": run_id, "written": False}
        html, md = report_stage(None, PipelineRun(config, run_id), run_date)  # deltalake + pandas: no JVM
    log.info("%s: report of published run %s written: %s", run_date, run_id, html)
    return {"run_date": run_date, "run_id": run_id, "written": True, "report_html": html, "report_md": md}


def same_lake(a: Path | str | LakeLocation, b: Path | str | LakeLocation) -> bool:
    """Whether two lakes are one: the same object-store location, or the same local folder (made absolute)."""
    return absolute_location(lake_root(a)) == absolute_location(lake_root(b))


def annotate_gold_events(config: PipelineConfig, run_date: str, run_id: str, versions: Mapping[str, int],
                         outlet_events) -> None:
    """Extra on each gold asset event: run date, run id, the Delta version written and the real table URI."""
    if not same_lake(config.lake, parse_time_lake()):
        log.warning("the lake is %s (Variable clwl_lake) but the gold Assets name %s (CLWL_LAKE at parse "
                    "time); set both to the same lake", config.lake, parse_time_lake())
    for asset, table in zip(gold_assets(), GOLD_TABLES):
        outlet_events[asset].extra = {"run_date": run_date, "run_id": run_id,
                                      "delta_version": versions.get(f"gold.{table}"),
                                      "table_uri": table_uri(config.lake, table)}


# ------------------------------------------------------------------------------------------------ metrics
#: The Variables of the nightly's `metrics` task: the file node_exporter's textfile collector reads, and a
#: Pushgateway (else the environment's CLWL_PUSHGATEWAY). Neither set: the task does nothing.
METRICS_VARIABLES = {"file": "clwl_metrics_file", "pushgateway": "clwl_pushgateway"}


def export_metrics(config: PipelineConfig) -> dict:
    """The latest published day's Prometheus gauges (clwl/analyses/metrics.py, what `clwl run --metrics-file`
    writes), written atomically to the file the Variable clwl_metrics_file names and pushed to clwl_pushgateway
    (else CLWL_PUSHGATEWAY), after the night's publish, a blocked one too (clwl_publish_blocked 1: the gate's
    verdict is in the lake)."""
    from clwl.analyses.metrics import export

    path = str(Variable.get(METRICS_VARIABLES["file"], default=None) or "").strip() or None
    gateway = (str(Variable.get(METRICS_VARIABLES["pushgateway"], default=None) or "").strip()
               or os.environ.get("CLWL_PUSHGATEWAY", "").strip() or None)
    if not (path or gateway):
        log.info("no Variable %s or %s: no metrics exported", *METRICS_VARIABLES.values())
        return {"metrics_file": None, "pushgateway": None}
    found = export(config.lake, path, gateway)
    log.info("metrics of run date %s (publish blocked: %s) written to %s, pushed to %s", found.run_date,
             ", ".join(found.blocked) or "none", path or "-", gateway or "-")
    return {"metrics_file": path, "pushgateway": gateway, "run_date": found.run_date, "blocked": found.blocked}


# ------------------------------------------------------------------------------------------------ ad hoc
ADHOC_PARAMS = {
    "run_date": Param(type="string", format="date", pattern=DATE_PATTERN, title="Run date",
                      description="The day to (re)run, YYYY-MM-DD (a folder of the landing root). Required."),
    "cluster": Param(None, type=["null", "string"], pattern=MQ_NAME_PATTERN, title="Cluster",
                     description="Only the queues of this cluster (makes the run a what-if run)."),
    "sending_qmgrs": Param(None, type=["null", "array"], uniqueItems=True,
                           items={"type": "string", "pattern": MQ_NAME_PATTERN}, title="Sending queue managers",
                           description="Only messages put on these queue managers (makes the run a what-if run)."),
    "profile": Param("default", type="string", enum=list(PROFILES), title="Algorithm profile",
                     description="default: the CLWL algorithm; legacy: pre-CLWL-attribute; mq9: MQ 9.0."),
    "whatif_name": Param(None, type=["null", "string"], pattern=NAME_PATTERN, title="What-if name",
                         description="Folder under <lake>/whatif/ (default: derived from the overrides)."),
    # The what-if overrides: the same JSON Schema as `clwl run --what-if` (clwl/analyses/whatif.py, MQ's ranges).
    "channel_attrs": Param({}, **CHANNEL_ATTRS_SCHEMA, title="Channel attributes",
                           description='Per cluster-receiver channel: CLWLWGHT 1-99, CLWLPRTY / CLWLRANK / NETPRTY '
                                       '0-9, e.g. {"TO.QM2": {"CLWLWGHT": 20}}.'),
    "suspend": Param([], **SUSPEND_SCHEMA, title="Suspend",
                     description="Queue managers to treat as SUSPEND(YES) all day."),
    "channel_state": Param({}, **CHANNEL_STATE_SCHEMA, title="Channel state",
                           description='All day, e.g. {"TO.QM3": "RETRYING"}.'),
    "queue_attrs": Param({}, **QUEUE_ATTRS_SCHEMA, title="Queue attributes",
                         description='Per QUEUE@QMGR: PUT, CLWLPRTY, CLWLRANK, DEFBIND, e.g. '
                                     '{"APP.ORDERS@QM4": {"PUT": "DISABLED"}}.'),
}
OVERRIDES = ("channel_attrs", "suspend", "channel_state", "queue_attrs")


def adhoc_plan(params: Mapping[str, Any]) -> dict:
    """What an ad-hoc run does, from its params: a plain re-run that republishes the day, or a what-if run
    (any override, any narrowing by cluster / sending queue managers, or an explicit what-if name) that writes
    under <lake>/whatif/<name>/ only. Pure: no Airflow context, no I/O."""
    unknown = sorted(set(params) - set(ADHOC_PARAMS))
    if unknown:  # a typo must never turn a what-if into a plain re-run that republishes the day
        raise ValueError(f"unknown param {unknown[0]!r} (known: {', '.join(ADHOC_PARAMS)})")
    run_date = check_date(params.get("run_date") or "")
    overrides = {k: params.get(k) for k in OVERRIDES if params.get(k)}
    senders = list(params.get("sending_qmgrs") or []) or None
    cluster = params.get("cluster") or None
    whatif = None
    if overrides or senders or cluster or params.get("whatif_name"):
        name = params.get("whatif_name")
        if not name:
            digest = hashlib.sha1(json.dumps({**overrides, "cluster": cluster, "senders": senders},
                                             sort_keys=True).encode()).hexdigest()[:8]
            name = f"adhoc-{digest}"
        whatif = {"name": name, **overrides}
        WhatIf.from_dict(whatif)  # the CLI's schema: name, keys, ranges (WhatIfError is a ValueError)
    return {"run_date": run_date, "profile": params.get("profile") or "default", "whatif": whatif,
            "senders": senders, "cluster": cluster}
