"""Stage a run date's gold.trend_facts (clwl/analyses/trend_facts.py) at detect time, so that the publish writes
them with the day's other gold tables, all or nothing: a blocked day adds no facts, a re-run replaces its rows.

From what the run holds: the staged distribution and stuck messages (small, read without the JVM, as
detect_stage reads the verdicts), the waiting messages from the staged replay (one Spark job, a few columns;
each sender's put span comes with detect_stage's per-sender counts), the applications' opens from the day's
partition of silver.message_events (one aggregate). Incidents, lint, drift and the evidence gaps are the
analyses' own (clwl/analyses), over the main lake's silver and bronze, as ``clwl metrics`` computes them for a
published day.
"""

from __future__ import annotations

from typing import Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from clwl.analyses.trend_facts import DayInputs, Fact, day_facts
from clwl.days import RunDate
from spark.run import PipelineRun
from spark.tables import TABLES, on_date, read_table

TREND_FACTS = TABLES["gold.trend_facts"]


def gather_facts(spark: SparkSession, run: PipelineRun, run_date: str, replayed: DataFrame, timelines: dict,
                 traced: Optional[int], agreed: Optional[int], spans: dict) -> list[Fact]:
    """The facts of ``run_date`` from the staged tables of this run (``replayed``: its staged routing_replay;
    ``spans``: each sender's first and last put in it, :func:`put_spans`, counted with detect's own aggregate)."""
    from clwl.analyses.drift import DriftError, drift
    from clwl.analyses.lint import RULE_NAMES, LintInputError
    from clwl.analyses.lint_lake import lint_lake
    from clwl.analyses.published_day import DELAYED_COLUMNS, day_evidence, day_incidents, estate_of

    day = RunDate(run_date).day
    lake = run.config.lake  # silver and bronze: the main lake's, in a what-if run too
    main = run.lake
    dist = run.out_lake.rows("staging.distribution", ["source", "sending_qmgr", "queue", "qmgr", "expected",
                                                     "observed"], filters=[("run_date", "=", day)]).to_pylist()
    stuck = run.out_lake.rows("staging.stuck_messages", filters=[("run_date", "=", day)]).to_pylist()
    delayed = [r.asDict() for r in replayed.where(F.col("held_from").isNotNull()).select(*DELAYED_COLUMNS).collect()]
    opens = []
    if main.exists("silver.message_events"):
        events = on_date(read_table(spark, main, "silver.message_events"), run_date)
        opens = [r.asDict() for r in events.groupBy(
            "sending_qmgr", "queue", "application", "bind", "target_qmgr",
            F.col("group_id").isNotNull().alias("grouped")).agg(F.count(F.lit(1)).alias("messages")).collect()]
    estate = estate_of(timelines, run_date)
    found = day_incidents(main, None, day, estate, stuck, delayed=delayed)
    try:
        findings: Optional[dict[str, int]] = {}
        for f in lint_lake(lake, run_date):
            findings[f.rule] = findings.get(f.rule, 0) + 1
    except LintInputError:
        findings = None
    try:
        changes = drift(lake, run_date, profile=run.profile)
    except DriftError:
        changes = None
    evidence = day_evidence(main, None, day, estate, stuck, put_spans=spans)
    return day_facts(run_date, DayInputs(distribution=dist, stuck=stuck, delayed=delayed, estate=estate,
                                         incidents=found, findings=findings, rules=RULE_NAMES, drift=changes,
                                         evidence=evidence, traced=traced, agreed=agreed, opens=opens))


def facts_frame(spark: SparkSession, run_date: str, facts: list[Fact]) -> DataFrame:
    day = RunDate(run_date).day
    build = TREND_FACTS.row_from(run_date=day)
    return spark.createDataFrame([build(f) for f in facts], TREND_FACTS.schema)
