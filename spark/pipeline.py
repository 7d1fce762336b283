"""The main job: ingest -> replay -> detect -> validate -> publish -> report, for one or more run dates.

Each stage (spark/stages.py) is a function of (spark, run, run_date, ...) that reads its inputs from the lake and
writes its outputs there, so the Airflow DAG can run the stages as separate tasks and `clwl run` can run them in one
process. Write-audit-publish: replay and detection write to `<lake>/staging/`, the quality gate validates the
staged tables, and only then are they published to `<lake>/gold/` (spark/publish.py).

What-if runs (Airflow params or `clwl run --what-if`) read the same silver tables but write everything they
produce under `<lake>/whatif/<name>/`: the published tables are never touched.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Optional

from pyspark.sql import SparkSession

from clwl.analyses.whatif import WhatIf
from clwl.days import UTC, RunDate
from clwl.lake.door import Lake, unsettled
from clwl.lake.fingerprint import code_digest
from clwl.lake.lineage_stages import ingest_lineage, run_lineage
from spark.config import PipelineConfig
from spark.replay import load_timelines
from spark.run import PipelineRun, new_run_id
from spark.stages import blocked_quality_docs, detect_stage, publish_stage, replay_stage, report_stage

Progress = Callable[[str], None]


@dataclass
class DateOutcome:
    run_date: str
    published: bool = False
    messages: int = 0
    stuck: int = 0
    unexpected: int = 0
    failures: list[str] = field(default_factory=list)
    validation_result: Optional[str] = None
    report_html: Optional[str] = None
    report_md: Optional[str] = None
    warnings: list[str] = field(default_factory=list)  # gold.run_summary.warnings (e.g. a day with no put record)
    started_at: Optional[datetime] = None
    inputs: dict[str, str] = field(default_factory=dict)  # what the date is made from (clwl/lake/fingerprint.py)
    unchanged_since: Optional[str] = None  # the published run whose inputs these are: the date was left as it is
    # An unchanged date whose report is not its published run's (a run killed between its publish and its report):
    # the run the report there was made for ("" when there is none). The run writes the report again.
    report_of: Optional[str] = None


@dataclass
class RunOutcome:
    run_id: str
    dates: list[DateOutcome]
    ingest: object = None
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def published(self) -> bool:
        """Whether every date passed the quality gate and was published."""
        return all(d.published for d in self.dates)


def landing_dates(config: PipelineConfig) -> list[str]:
    from spark.ingest import discover_landing

    dates, _, _ = discover_landing(config.landing)
    return dates


def run_pipeline(config: PipelineConfig, run_dates: Optional[list[str]] = None, profile: str = "default",
                 whatif: Optional[WhatIf] = None, spark: Optional[SparkSession] = None,
                 progress: Progress = print, ingest_first: bool = True, senders: Optional[list[str]] = None,
                 cluster: Optional[str] = None, force: bool = False, run_id: Optional[str] = None) -> RunOutcome:
    """`clwl run`: every stage for every run date (default: every date in the landing folder).

    A date whose inputs (clwl/lake/fingerprint.py: the rows it reads, the run's options, the code) are those its
    published run recorded is left as it is; ``force`` runs it all the same. When the landing folder holds
    nothing new either, no Spark session is started at all.

    The whole run holds the lake lock `<lake>/_lock` (clwl/lake/lock.py), taken before Spark starts: when another
    writer holds it, clwl.lake.lock.LakeBusy is raised at once (after $CLWL_LOCK_WAIT seconds, when set).
    ``run_id``: the run's id when the caller made it (`clwl run` takes the lock under it before Spark starts)."""
    from clwl.lake.lock import lake_lock

    t0 = _time.perf_counter()
    run = PipelineRun(config, run_id or new_run_id("run"), profile, whatif, tuple(senders) if senders else None,
                      cluster,
                      force=force)
    with lake_lock(config.lake, purpose=f"clwl run {run.run_id}", progress=progress), \
            run_lineage(run.out_lake, run.run_id):  # <lake>/lineage/<run_id>.jsonl, when a stage runs
        outcome = _run_pipeline(run, run_dates, spark, progress, ingest_first)
    outcome.seconds["total"] = _time.perf_counter() - t0
    return outcome


# -- the run: ingest once, then the date stages in order, each timed by the one wrapper ----------------------
@dataclass(frozen=True)
class Stage:
    """One step of the run for one date. ``step`` does the work and returns the lines to print under the
    stage's title and, for a stage with parts, how its seconds split (e.g. validate / publish)."""

    name: str
    title: Callable[[PipelineRun, str], str]
    step: Callable[[SparkSession, PipelineRun, DateOutcome], tuple[list[str], Optional[dict[str, float]]]]
    runs_if: Callable[[DateOutcome], bool] = lambda day: True


def _replay(spark: SparkSession, run: PipelineRun, day: DateOutcome):
    day.messages = replay_stage(spark, run, day.run_date)
    return [f"{day.messages} messages replayed"], None


def _detect(spark: SparkSession, run: PipelineRun, day: DateOutcome):
    counts = detect_stage(spark, run, day.run_date, None, day.started_at)
    day.stuck, day.unexpected, day.warnings = counts["stuck"], counts["unexpected"], list(counts["warnings"])
    return ([f"{day.stuck} stuck, {day.unexpected} unexpected distribution rows"]
            + [f"WARNING: {w}" for w in day.warnings]), None


def _publish(spark: SparkSession, run: PipelineRun, day: DateOutcome):
    res = publish_stage(spark, run, day.run_date, day.inputs)
    day.published, day.failures = bool(res.published), list(res.failures)
    day.validation_result = str(res.result_path) if res.result_path else None
    lines = [] if res.published else [f"quality gate blocked publishing {day.run_date}: "
                                      f"{'; '.join(res.failures)[:500]}"]
    if not res.published and res.result_path:
        lines.append(blocked_quality_docs(run, day.run_date, res.result_path))
    return lines, {"validate": res.seconds.get("validate", 0), "publish": res.seconds.get("write", 0)}


def _report(spark: SparkSession, run: PipelineRun, day: DateOutcome):
    _kill_before_report()
    day.report_html, day.report_md = report_stage(spark, run, day.run_date)
    return [], None


# Test-only fault injection (tests/spark/test_object_store_kills.py), inert unless the variable is set: with
# CLWL_TEST_KILL_BEFORE_REPORT=1 the process SIGKILLs itself (its process group when it leads one, taking the Spark
# JVM along) after a date's publish moved the published pointer, before its report is written, as `kill -9` would.
_KILL_BEFORE_REPORT_ENV = "CLWL_TEST_KILL_BEFORE_REPORT"


def _kill_before_report() -> None:
    import os
    import signal

    if os.environ.get(_KILL_BEFORE_REPORT_ENV, "").strip() != "1":
        return
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


DATE_STAGES = (
    Stage("replay", lambda run, d: f"{d}: replay ({run.label})", _replay),
    Stage("detect", lambda run, d: f"{d}: detect stuck messages and distribution", _detect),
    Stage("publish", lambda run, d: f"{d}: validate and publish", _publish),
    Stage("report", lambda run, d: f"{d}: report", _report, runs_if=lambda day: day.published),
)


HEARTBEAT_SECONDS = 20.0  # a stage still running says so this often, with its elapsed time


def _timed(seconds: dict[str, float], name: str, work: Callable[[], tuple[object, Optional[dict[str, float]]]],
           progress: Progress = lambda line: None):
    """Run ``work()`` -> (result, parts); add its seconds to ``seconds[name]``, or, for a stage with parts
    (publish: validate, then write), each part's own seconds. While it runs, a line every HEARTBEAT_SECONDS says
    it is still at work; when it ends, a line gives its time. Returns the result."""
    import threading

    t = _time.perf_counter()
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(HEARTBEAT_SECONDS):
            progress(f"      ... {name}: {_time.perf_counter() - t:.0f} s")

    beat = threading.Thread(target=heartbeat, name=f"clwl-{name}-progress", daemon=True)
    beat.start()
    try:
        result, parts = work()
    finally:
        stop.set()
        beat.join()
    elapsed = _time.perf_counter() - t
    for key, secs in (parts or {name: elapsed}).items():
        seconds[key] = seconds.get(key, 0.0) + secs
    split = ", ".join(f"{k} {v:.1f} s" for k, v in parts.items()) if parts else ""
    progress(f"      {name} done in {elapsed:.1f} s" + (f" ({split})" if split else ""))
    return result


def _run_pipeline(run: PipelineRun, run_dates: Optional[list[str]], spark: Optional[SparkSession],
                  progress: Progress, ingest_first: bool) -> RunOutcome:
    from spark.ingest import ingest
    from spark.session import get_spark

    config = run.config
    dates = run_dates or landing_dates(config)
    if run.whatif is not None:
        # Before Spark starts: overrides naming what the day does not know are refused (WhatIfError), and a
        # what-if never ingests, so it writes nothing outside <lake>/whatif/<name>/ (PipelineRun.out).
        check_whatif(config, dates, run.whatif)
        ingest_first = False
    total = len(DATE_STAGES) + 1
    outcome = RunOutcome(run.run_id, [])
    code = code_digest()
    checked = _checked_days(run, dates, code, ingest_first)
    if checked is not None and all(day.unchanged_since for day in checked):  # nothing to do: no Spark at all
        for day in checked:
            progress(f"{day.run_date}: unchanged since {day.unchanged_since}, published as is")
            report_published_run(run, day, progress)
        outcome.dates = checked
        return outcome
    spark = spark or get_spark(config.master, shown_output=config.verbose, lake=config.lake)
    from spark.publish import settle_before_writing

    t = _time.perf_counter()
    if settle_before_writing(run.lake, lambda: spark, progress):  # a killed publish is rolled back at the next write
        outcome.seconds["rollback"] = _time.perf_counter() - t  # in the run's time breakdown
    if ingest_first:
        progress(f"[1/{total}] ingest {len(dates)} date(s) from {config.landing}")
        with ingest_lineage(run.lake, config.landing, run.run_id, dates):
            outcome.ingest = _timed(outcome.seconds, "ingest", lambda: (ingest(
                config, dates, spark=spark, progress=lambda m: progress("      " + m)), None), progress)
    for i, d in enumerate(dates):
        # With nothing to ingest, the digests checked before Spark started still hold (an ingest that reads no
        # file only logs its files as unchanged, which the ingest log's digest leaves out); else take them now.
        day = checked[i] if checked is not None else date_before_run(run, d, code)
        day.started_at = datetime.now(UTC)
        if day.unchanged_since and not run.force:
            progress(f"{d}: unchanged since {day.unchanged_since}, published as is")
            report_published_run(run, day, progress)
            outcome.dates.append(day)
            continue
        day.unchanged_since = None
        for n, stage in enumerate(DATE_STAGES, start=2):
            if not stage.runs_if(day):
                continue
            progress(f"[{n}/{total}] {stage.title(run, d)}")

            def step(stage: Stage = stage, day: DateOutcome = day):
                lines, parts = stage.step(spark, run, day)
                for line in lines:
                    progress("      " + line)
                return None, parts

            _timed(outcome.seconds, stage.name, step, progress)
        outcome.dates.append(day)
    return outcome


def unchanged_run(config: PipelineConfig, run_dates: list[str], profile: str = "default",
                  whatif: Optional[WhatIf] = None, progress: Progress = print) -> Optional[RunOutcome]:
    """The outcome of `clwl run` when it has nothing to do (every date as its published run left it, nothing new
    to ingest, no publish to settle), found without Spark and without the lake lock (it only reads); None when
    the run has work. `clwl run` asks before it prepares Spark; run_pipeline asks again under the lock.

    A date whose report is not its published run's (a run killed after its publish, before its report) has its
    report written again here, as the published run's, under the lake lock and without Spark."""
    t0 = _time.perf_counter()
    code = code_digest()
    run = PipelineRun(config, new_run_id("run"), profile, whatif)
    days = _checked_days(run, run_dates, code, ingest_first=whatif is None)
    if days is None or not all(day.unchanged_since for day in days):
        return None
    if any(day.report_of is not None for day in days):
        from clwl.lake.lock import lake_lock

        with lake_lock(config.lake, purpose=f"clwl run {run.run_id} (reports)", progress=progress):
            days = _checked_days(run, run_dates, code, ingest_first=whatif is None)  # again, under the lock
            if days is None or not all(day.unchanged_since for day in days):
                return None
            for day in days:
                report_published_run(run, day, progress)
    return RunOutcome(run.run_id, days, seconds={"check": _time.perf_counter() - t0})


def report_published_run(run: PipelineRun, day: DateOutcome, progress: Progress) -> None:
    """An unchanged date whose report is not its published run's (``day.report_of``): write the report again,
    as the published run's (the report reads the published gold tables and that run's validation results, with
    deltalake and pandas: no Spark). The caller holds the lake lock."""
    from dataclasses import replace

    if day.report_of is None or not day.unchanged_since:
        return
    was = f"the report there is run {day.report_of}'s" if day.report_of else "it has no report"
    progress(f"{day.run_date}: {was}, not the published run's: writing the report of {day.unchanged_since}")
    day.report_html, day.report_md = report_stage(None, replace(run, run_id=day.unchanged_since), day.run_date)
    day.report_of = None


def _checked_days(run: PipelineRun, dates: list[str], code: str, ingest_first: bool) -> Optional[list[DateOutcome]]:
    """Each date as :func:`date_before_run` finds it, when that can be known before Spark starts; None when the
    run is forced, a publish is left to settle, or the ingest has files to read (the inputs are known after it)."""
    from spark.ingest import ingest_pending

    if run.force or unsettled(run.out_lake.layer("gold")) or (ingest_first and ingest_pending(run.config, dates, lake=run.lake)):
        return None
    return [date_before_run(run, d, code) for d in dates]


def date_before_run(run: PipelineRun, run_date: str, code: Optional[str] = None) -> DateOutcome:
    """The date's outcome before its stages: its inputs now (clwl/lake/fingerprint.py), and, when they are those its
    published run recorded (and it is still published), that run's id in ``unchanged_since`` with the published
    counts (nothing to do). `clwl run` and the nightly DAG ask it; the publish records ``inputs``."""
    from clwl.lake.fingerprint import date_inputs

    run_date = RunDate(run_date)
    day = DateOutcome(run_date, started_at=datetime.now(UTC))
    day.inputs = date_inputs(run.lake, run_date, run.options, code)
    pub = run.out_lake.published()
    run_id = pub.dates.get(run_date)
    if run_id and pub.inputs.get(run_date) == day.inputs:
        day.unchanged_since, day.published = run_id, True
        summary = run.out_lake.rows("gold.run_summary", ["messages_replayed", "messages_stuck",
                                                         "distribution_unexpected", "warnings"],
                                    filters=[("run_date", "=", run_date.day)],
                                    version=run.out_lake.published_version("gold.run_summary")).to_pylist()
        if summary:
            row = summary[-1]
            day.messages, day.stuck = row["messages_replayed"] or 0, row["messages_stuck"] or 0
            day.unexpected, day.warnings = row["distribution_unexpected"] or 0, [w for w in [row["warnings"]] if w]
        # The date is done when its report is the published run's own (clwl/lake/reports.py): a run killed after
        # its publish, before its report, left the previous run's report there, or none.
        from clwl.lake.reports import REPORT_HTML, SUMMARY_MD, report_folder, report_made_for

        report = report_folder(run.out.reports, run_date)
        made_for = report_made_for(run.out.reports, run_date)
        if made_for == run_id:
            day.report_html, day.report_md = str(report / REPORT_HTML), str(report / SUMMARY_MD)
        else:
            day.report_of = made_for or ""
    return day


def check_whatif(config: PipelineConfig, run_dates: list[str], whatif: WhatIf) -> None:
    """:class:`clwl.analyses.whatif.WhatIfError` when ``whatif`` cannot run on ``run_dates``: a date with nothing ingested
    (a what-if replays silver as it is), or a channel, queue manager or queue instance that no sending queue
    manager's configuration of that day knows. Reads silver history with deltalake: no Spark."""
    from clwl.analyses.whatif import WhatIfError, unknown_names

    for d in run_dates:
        if not Lake(config.lake).exists("silver.config_history"):
            raise WhatIfError(f"what-if {whatif.name}: nothing ingested in {config.lake}; run `clwl run --date {d}` "
                              f"first (a what-if replays the ingested day)")
        timelines = load_timelines(config, d)
        if not timelines:
            raise WhatIfError(f"what-if {whatif.name}: no configuration ingested for {d}; run `clwl run --date "
                              f"{d}` first (a what-if replays the ingested day)")
        views = [snap.view for tl in timelines.values() for snap in tl]
        channels = {c.name for v in views for c in (*v.channels, *v.local_receivers)}
        qmgrs = ({v.qmgr.name for v in views} | {c.qmgr for v in views for c in v.channels}
                 | {i.qmgr for v in views for i in v.instances})
        instances = {f"{i.queue}@{i.qmgr}" for v in views for i in v.instances}
        unknown = unknown_names(whatif, channels, qmgrs, instances)
        if unknown:
            raise WhatIfError(f"what-if {whatif.name}: not in the configuration of {d}: {', '.join(unknown)}")

