"""The quality gate against its floor (issue 45, lever 2): the product's validation of a date's gold and silver
tables, timed and with its Spark jobs counted per table, against the same checks computed as one plain Spark
aggregate pass per table.

    python bench/validate_floor.py --lake DIR              # a lake a `clwl run` made (bench/jobs.py --keep DIR/..)
    python bench/validate_floor.py --lake DIR --repeat 3   # medians of 3, product and floor alternated
    python bench/validate_floor.py --lake DIR --jobs       # also each table's jobs by call site (Spark's UI)
    python bench/validate_floor.py --lake DIR --spark      # every table through GX's Spark engine, as a large
                                                           # table is (no pandas copy): the samples as 1M's shape

The product side is publish's validation as spark/publish.py runs it (frames persisted but routing_replay and
silver message_events, the default cross-table checks, every gold suite then every silver suite), on the
published gold rows of the date rather than the staged ones (the same rows: gold took them). It writes nothing.

The floor: per table, one `df.agg(...)` holding every rule of its suite and its one-table checks (run date,
timing columns) as a count of the rows that break it; the schema rules are read from the schema (no job). The
cross-table checks (row counts against silver, keys in routing_replay, the distribution's totals, the run summary
against the tables) are not one table's aggregate: the floor runs them as the product does (their Spark
functions), so both sides pay for them. This translation of the suites is the bench's, to time a floor; the
gate's rules are the suites', run by Great Expectations.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _sql(value) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return repr(value)


def _condition(rc) -> str | None:
    """A GX 1.x row condition (nullity, comparison, and/or) as Spark SQL."""
    if rc is None:
        return None
    if isinstance(rc, str):
        return rc
    kind = rc.get("type")
    if kind == "nullity":
        return f"`{rc['column']['name']}` IS {'' if rc.get('is_null') else 'NOT '}NULL"
    if kind == "comparison":
        return f"`{rc['column']['name']}` {rc['operator']} {_sql(rc['parameter'])}"
    if kind in ("and", "or"):
        return "(" + f" {kind.upper()} ".join(f"({_condition(c)})" for c in rc["conditions"]) + ")"
    raise ValueError(f"row condition {rc!r}")


def floor_rules(suite: dict, columns: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(name, SQL aggregate counting the rows that break the rule) per expectation needing the data, and the
    names of the schema rules that failed (from the schema alone)."""
    aggs: list[tuple[str, str]] = []
    schema_failed: list[str] = []
    for i, e in enumerate(suite["expectations"]):
        t, kw = e["type"], e.get("kwargs") or {}
        name = f"{i}:{t}"
        col = f"`{kw['column']}`" if "column" in kw else None
        where = _condition(kw.get("row_condition"))
        if t == "expect_table_columns_to_match_set":
            want, have = set(kw["column_set"]), set(columns)
            if (want != have) if kw.get("exact_match", True) else not want <= have:
                schema_failed.append(name)
            continue
        if t == "expect_column_to_exist":
            if kw["column"] not in columns:
                schema_failed.append(name)
            continue
        if any(c not in columns for c in [kw.get("column"), kw.get("column_A"), kw.get("column_B"),
                                          *(kw.get("column_list") or [])] if c):
            schema_failed.append(name)  # GX fails an expectation on a missing column
            continue
        if t == "expect_column_values_to_not_be_null":
            bad = f"{col} IS NULL"
        elif t == "expect_column_values_to_be_in_set":
            bad = f"{col} IS NOT NULL AND NOT {col} IN ({', '.join(_sql(v) for v in kw['value_set'])})"
        elif t == "expect_column_values_to_be_between":
            parts = []
            if kw.get("min_value") is not None:
                parts.append(f"{col} < {_sql(kw['min_value'])}")
            if kw.get("max_value") is not None:
                parts.append(f"{col} > {_sql(kw['max_value'])}")
            bad = f"{col} IS NOT NULL AND ({' OR '.join(parts)})"
        elif t == "expect_column_values_to_match_regex":
            bad = f"{col} IS NOT NULL AND NOT {col} RLIKE {_sql(kw['regex'])}"
        elif t == "expect_column_pair_values_a_to_be_greater_than_b":
            a, b = f"`{kw['column_A']}`", f"`{kw['column_B']}`"
            bad = f"{a} IS NOT NULL AND {b} IS NOT NULL AND NOT {a} {'>=' if kw.get('or_equal') else '>'} {b}"
        elif t in ("expect_compound_columns_to_be_unique", "expect_column_values_to_be_unique"):
            cols = ", ".join(f"`{c}`" for c in (kw.get("column_list") or [kw["column"]]))
            # rows minus distinct keys: 0 exactly when every key is unique (one distinct aggregate, same pass)
            aggs.append((name, f"count(1) - count(DISTINCT struct({cols}))"))
            continue
        elif t == "unexpected_rows_expectation":
            q = kw["unexpected_rows_query"]
            head = "SELECT * FROM {batch} WHERE "
            if not q.startswith(head):
                raise ValueError(f"unexpected_rows_query not of the form {head!r}: {q}")
            bad = q[len(head):]
        else:
            raise ValueError(f"no floor rule for {t}")
        aggs.append((name, f"count_if(({bad}){f' AND ({where})' if where else ''})"))
    return aggs, schema_failed


def floor_pass(df, suite: dict, one_table: list[tuple[str, str]]) -> dict[str, int]:
    """The table's rules as one aggregate: {rule: rows breaking it}, plus the row count."""
    from pyspark.sql import functions as F

    aggs, schema_failed = floor_rules(suite, df.columns)
    aggs = aggs + one_table
    exprs = [F.count(F.lit(1)).alias("__rows")] + [F.expr(a).alias(f"r{i}") for i, (_, a) in enumerate(aggs)]
    row = df.agg(*exprs).first()
    out = {name: int(row[f"r{i}"] or 0) for i, (name, _) in enumerate(aggs)}
    out.update({n: -1 for n in schema_failed})
    out["__rows"] = int(row["__rows"])
    return out


class Jobs:
    """The session's Spark jobs, per job group (the table being validated), from the status tracker; with the
    UI on (``--jobs``), each job's call site too."""

    def __init__(self, spark, port: int | None):
        self.spark, self.port = spark, port
        self.sc = spark.sparkContext

    def group(self, name: str) -> None:
        self.sc.setJobGroup(name, name)

    def ids(self, name: str) -> list[int]:
        return list(self.sc.statusTracker().getJobIdsForGroup(name))

    def sites(self, name: str) -> dict[str, int]:
        if self.port is None:
            return {}
        time.sleep(0.5)  # the listener bus delivers the job events asynchronously
        url = f"http://127.0.0.1:{self.port}/api/v1/applications/{self.sc.applicationId}/jobs"
        with urllib.request.urlopen(url, timeout=30) as r:
            jobs = json.load(r)
        out: dict[str, int] = {}
        for j in jobs:
            if j.get("jobGroup") == name:
                out[j["name"]] = out.get(j["name"], 0) + 1
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def frames(spark, lake, day):
    """The date's gold tables (published version) and silver message_events, as publish_stage hands them over."""
    from pyspark.sql import functions as F

    from clwl.lake.door import GOLD_TABLES
    from clwl.lake.published import read_published
    from spark.tables import on_date, read_table

    pub = read_published(lake.layer("gold"))
    gold = {t: on_date(read_table(spark, lake, f"gold.{t}", pub.version(t)), day) for t in GOLD_TABLES
            if pub.version(t) is not None}
    gold["run_summary"] = gold["run_summary"].withColumn("status", F.lit("published"))
    events = on_date(read_table(spark, lake, "silver.message_events"), day)
    return gold, events


def product(spark, config, day, jobs: Jobs, show_sites: bool) -> tuple[float, dict]:
    """publish's validation (spark/publish.py, up to the verdict): seconds, and per table its jobs and seconds."""
    from pyspark import StorageLevel

    from clwl.lake.door import GOLD_TABLES, Lake
    from spark.cross_checks import default_cross_checks, events_for_run_date, silver_tables
    from spark.quality import forget_frames, validate_table

    lake = Lake(config.lake)
    gold, events = frames(spark, lake, day)
    run_id = gold["run_summary"].select("run_id").first()[0]
    started = time.perf_counter()
    per: dict[str, dict] = {}
    uncached = ("routing_replay",)
    forget_frames()
    cached = {n: df if n in uncached else df.persist(StorageLevel.MEMORY_AND_DISK) for n, df in gold.items()}
    try:
        inputs = silver_tables(spark, lake, day, skip={"message_events"})
        inputs["message_events"] = events_for_run_date(events, day)
        checks = default_cross_checks(spark, lake, day, run_id, cached, inputs)
        todo = [(f"gold.{n}", cached[n], checks.get(n, ()), False) for n in GOLD_TABLES if n in cached]
        todo += [(f"silver.{n}", df, (), n != "message_events") for n, df in sorted(inputs.items())]
        verdict = True
        for suite, df, extra, cache in todo:
            jobs.group(f"product {suite} {time.monotonic_ns()}")
            group = spark.sparkContext.getLocalProperty("spark.jobGroup.id")
            t = time.perf_counter()
            o = validate_table(df, suite, extra, cache=cache)
            per[suite] = {"seconds": time.perf_counter() - t, "jobs": len(jobs.ids(group)),
                          "engine": o.result_json["engine"], "success": o.success,
                          "sites": jobs.sites(group) if show_sites else {}}
            verdict &= o.success
        per["__verdict"] = verdict
    finally:
        _release(spark, cached, gold)
    return time.perf_counter() - started, per


def _release(spark, cached: dict, gold: dict) -> None:
    """After one side's validation: the local copies forgotten, the frames it cached unpersisted, no job group."""
    from spark.quality import forget_frames

    forget_frames()
    for n, df in cached.items():
        if df is not gold[n]:
            df.unpersist()
    spark.sparkContext.setJobGroup("", "")


def floor(spark, config, day, jobs: Jobs) -> tuple[float, dict]:
    """The same checks as one aggregate pass per table (the cross-table checks as the product runs them)."""
    from pyspark import StorageLevel

    from clwl.lake.door import GOLD_TABLES, Lake
    from spark.cross_checks import (
        TIMING_RULES,
        check_distribution_totals,
        check_keys_in,
        check_row_count,
        check_run_summary,
        events_for_run_date,
        silver_tables,
    )
    from spark.quality import forget_frames, load_suite_json

    lake = Lake(config.lake)
    gold, events = frames(spark, lake, day)
    run_id = gold["run_summary"].select("run_id").first()[0]
    started = time.perf_counter()
    per: dict[str, dict] = {}
    forget_frames()
    cached = {n: df if n == "routing_replay" else df.persist(StorageLevel.MEMORY_AND_DISK) for n, df in gold.items()}
    try:
        inputs = silver_tables(spark, lake, day, skip={"message_events"})
        inputs["message_events"] = events_for_run_date(events, day)
        replay = cached.get("routing_replay")
        cross = {"routing_replay": [check_row_count(inputs["message_events"], "silver/message_events")],
                 "stuck_messages": [check_keys_in(replay, ["sending_qmgr", "msg_id"], "gold/routing_replay")],
                 "distribution": [check_distribution_totals(replay)],
                 "run_summary": [check_run_summary(run_id, replay, cached.get("stuck_messages"),
                                                   cached.get("distribution"))]}
        todo = [(f"gold.{n}", n, cached[n]) for n in GOLD_TABLES if n in cached]
        todo += [(f"silver.{n}", n, df) for n, df in sorted(inputs.items())]
        verdict = True
        for suite, name, df in todo:
            jobs.group(f"floor {suite} {time.monotonic_ns()}")
            group = spark.sparkContext.getLocalProperty("spark.jobGroup.id")
            t = time.perf_counter()
            one_table = []
            if suite.startswith("gold."):
                one_table.append(("run_date", f"count_if(run_date IS NULL OR run_date <> DATE'{day}')"))
                if name in TIMING_RULES and TIMING_RULES[name][0] in df.columns:
                    one_table.append(("timing", f"count_if({TIMING_RULES[name][1]})"))
            counts = floor_pass(df, load_suite_json(suite), one_table)
            ok = all(v == 0 for k, v in counts.items() if k != "__rows")
            for c in cross.get(name, []) if suite.startswith("gold.") else []:
                ok &= c.func(df).success
            per[suite] = {"seconds": time.perf_counter() - t, "jobs": len(jobs.ids(group)), "success": ok}
            verdict &= ok
        per["__verdict"] = verdict
    finally:
        _release(spark, cached, gold)
    return time.perf_counter() - started, per


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lake", required=True, help="a lake `clwl run` made")
    ap.add_argument("--date", action="append", help="run date(s) (default: every published date)")
    ap.add_argument("--repeat", type=int, default=1, help="rounds, product and floor alternated; medians shown")
    ap.add_argument("--jobs", action="store_true", help="per table, the jobs by call site (Spark's UI)")
    ap.add_argument("--spark", action="store_true", help="no pandas copy: every table on GX's Spark engine")
    a = ap.parse_args()

    from clwl.lake.door import Lake
    from clwl.lake.published import read_published
    from spark.config import PipelineConfig
    from spark.session import get_spark

    config = PipelineConfig.from_env(lake=Path(a.lake))
    if a.spark:
        from spark import quality

        quality.SMALL_TABLE_BYTES = -1  # nothing is small
    dates = a.date or sorted(read_published(Lake(config.lake).layer("gold")).dates)
    port = None
    conf = {"spark.ui.retainedJobs": "100000", "spark.ui.retainedStages": "100000"}
    if a.jobs:
        from bench.jobs import _free_port

        port = _free_port()
        conf.update({"spark.ui.enabled": "true", "spark.ui.port": str(port), "spark.driver.host": "127.0.0.1"})
    spark = get_spark(config.master, conf=conf)
    jobs = Jobs(spark, port)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; lake {a.lake}; dates {dates}")
    # One untimed round first: the JVM's classes and GX's context are loaded once per process.
    product(spark, config, dates[0], jobs, False)
    for day in dates:
        runs: dict[str, list] = {"product": [], "floor": []}
        for _ in range(a.repeat):
            runs["product"].append(product(spark, config, day, jobs, a.jobs))
            runs["floor"].append(floor(spark, config, day, jobs))
        p_sec = statistics.median(s for s, _ in runs["product"])
        f_sec = statistics.median(s for s, _ in runs["floor"])
        p_last, f_last = runs["product"][-1][1], runs["floor"][-1][1]
        print(f"\n{day}: verdict product {p_last['__verdict']}, floor {f_last['__verdict']}")
        print(f"{'table':<24} {'engine':>7} {'product jobs':>12} {'product s':>9} {'floor jobs':>10} {'floor s':>8}")
        for t in [k for k in p_last if not k.startswith("__")]:
            ps = statistics.median(r[1][t]["seconds"] for r in runs["product"])
            fs = statistics.median(r[1][t]["seconds"] for r in runs["floor"])
            print(f"{t:<24} {p_last[t]['engine']:>7} {p_last[t]['jobs']:12d} {ps:9.2f} {f_last[t]['jobs']:10d} {fs:8.2f}")
            for site, n in p_last[t]["sites"].items():
                print(f"    {n:3d} x {site}")
        pj = sum(v["jobs"] for k, v in p_last.items() if not k.startswith("__"))
        fj = sum(v["jobs"] for k, v in f_last.items() if not k.startswith("__"))
        print(f"{'all tables':<24} {'':>7} {pj:12d} {p_sec:9.2f} {fj:10d} {f_sec:8.2f}")
        print(f"ratio product/floor: {p_sec / f_sec:.2f}x in seconds (median of {a.repeat}), "
              f"{pj / max(fj, 1):.2f}x in jobs")
    spark.stop()


if __name__ == "__main__":
    sys.path.insert(0, os.environ.get("CLWL_BENCH_CODE", str(ROOT)))  # another checkout: its code, timed the same way
    main()
