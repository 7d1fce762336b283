"""The quality gate: Great Expectations suites (files in expectations/) plus cross-table checks in Python.

`validate_table(df, suite)` runs one suite on one Spark DataFrame in an ephemeral GX context (GX writes no
files) and returns a `ValidationOutcome` whose `result_json` is what the reader of a blocked run gets. A small
table (run_summary, stuck_messages, distribution, the silver history: thousands of rows) is validated by GX's
pandas engine on an Arrow copy of the frame, which gives the same results without a Spark job per expectation
(a suite costs tenths of a second instead of seconds); its `unexpected_rows_expectation`s, Spark SQL, are
answered by one Spark query over the frame. Checks a
suite cannot express on one table (counts reconciling with silver, expected totals against the replay, the run
summary against the gold tables) are `ExtraCheck`s: plain functions over Spark DataFrames whose results are
recorded beside the GX results, in the same outcome.

Suites are named `<layer>.<table>` and live in `expectations/<layer>.<table>.json`, GX 1.x ExpectationSuite
JSON (`{"name", "expectations": [{"type", "kwargs", "meta"}], "meta"}`).

This module runs a suite and the extra checks on a table and words the failures; GX itself (its ephemeral context,
the pandas engine's unexpected_rows queries answered by Spark) is spark/quality_gx.py's, and the extra checks
publish runs (the run date, the cross-table checks) and the silver tables they read are spark/cross_checks.py's.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import time
import uuid
import weakref
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from spark.config import expectations_dir
from spark.quality_gx import gx_validate, suite_queries, where_query

log = logging.getLogger(__name__)

EXPECTATIONS_DIR = expectations_dir()  # the checkout's expectations/, or the installed copy

# GX runs twice at most: the whole suite with BOOLEAN_ONLY (no per-expectation fetch of example values: on 2
# cores that halves the time of a passing suite), then, only when something failed, the failed expectations
# again with SUMMARY (unexpected counts and a few example values, never the full unexpected list).
FAST_FORMAT = {"result_format": "BOOLEAN_ONLY"}
DETAIL_FORMAT = {"result_format": "SUMMARY", "partial_unexpected_count": 5}
#: Example values (or rows, or keys) quoted in a failure line.
FAILURE_EXAMPLES = 3
# A frame whose plan Spark estimates at this many bytes or fewer (for a Delta read: its Parquet files) is
# validated in pandas. The samples' tables are kilobytes; at 1M messages stuck_messages and distribution are
# under a megabyte and routing_replay is tens of megabytes (it stays on Spark).
SMALL_TABLE_BYTES = 16 * 2**20


# ------------------------------------------------------------------------------------------------ results


@dataclass(frozen=True)
class CheckResult:
    """What an ExtraCheck found: `observed` must be JSON-serialisable (numbers, strings, small lists)."""

    success: bool
    reason: str = ""
    observed: Any = None


@dataclass(frozen=True)
class ExtraCheck:
    """A check in Python, recorded with a suite's results. `func(df)` gets the table being validated."""

    name: str
    func: Callable[[DataFrame], CheckResult]
    column: str | None = None
    description: str = ""
    # The same check on the table's pandas copy, when validate_table made one (a small table): no Spark job.
    local: Callable[[Any], CheckResult] | None = None
    # A check over the table's own rows: the SQL condition a breaking row meets. validate_table counts it in the
    # aggregate that counts the suite's unexpected_rows queries (one Spark job for all); `func` reads that count
    # with count_where, and fetches example rows only when it is not zero.
    bad_rows: str | None = None


@dataclass
class ValidationOutcome:
    table: str  # "<layer>.<table>", the suite's name
    success: bool
    failed: list[str]  # "<expectation type> <column(s)>: <short reason>", one per failed check
    result_json: dict = field(repr=False)


# ------------------------------------------------------------------------------------------------ suites


def suite_path(suite: str | os.PathLike) -> Path:
    """A suite file from a path, a `<layer>.<table>` name, or a bare gold/silver table name."""
    p = Path(suite)
    if p.suffix == ".json" or p.is_file():
        if not p.is_file():
            raise FileNotFoundError(f"no expectation suite file {p}")
        return p
    name = str(suite)
    candidates = [name] if "." in name else [f"gold.{name}", f"silver.{name}"]
    for c in candidates:
        f = EXPECTATIONS_DIR / f"{c}.json"
        if f.is_file():
            return f
    raise FileNotFoundError(f"no expectation suite named {name!r} in {EXPECTATIONS_DIR}")


def load_suite_json(suite: str | os.PathLike) -> dict:
    path = suite_path(suite)
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict) or not data.get("name") or not isinstance(data.get("expectations"), list):
        raise ValueError(f"{path}: not a GX ExpectationSuite (needs 'name' and a list of 'expectations')")
    return data


# ------------------------------------------------------------------------------------------------ small tables

# What is known of a frame validated here, for the cross-table checks: its pandas copy and its row count.
_facts: "weakref.WeakKeyDictionary[DataFrame, dict]" = weakref.WeakKeyDictionary()


def _local_copy(df: DataFrame):
    """`df` as a pandas DataFrame when Spark estimates it small (no Spark job for the estimate), else None.

    None also when a floating-point column holds NaN: pandas cannot tell NaN from null, Spark can (a NaN is
    not null, and is above every number), so such a frame is validated in Spark to block exactly what it would
    there; and when the copy cannot be made (e.g. a timestamp beyond pandas' range)."""
    try:
        size = int(str(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))  # a Scala BigInt
    except Exception:  # noqa: BLE001 - no estimate: Spark it is
        return None
    if size > SMALL_TABLE_BYTES:
        return None
    try:
        import pyarrow as pa
        import pyarrow.compute as pc

        table = df.toArrow()
        for column in table.columns:
            if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
                return None
        return table.to_pandas()
    except Exception as exc:  # noqa: BLE001
        log.info("quality: validating in Spark, no pandas copy (%s)", _short(str(exc), 160))
        return None


def _fact(df: DataFrame | None) -> dict:
    try:
        return _facts.setdefault(df, {}) if df is not None else {}
    except TypeError:  # not weakly referenceable: nothing remembered
        return {}


def forget_frames() -> None:
    """Drop what validate_table remembered of the frames it validated (publish calls it before and after a
    gate: the copies and counts hold only for the frames of one publish)."""
    _facts.clear()


def row_count(df: DataFrame) -> int:
    """df.count(), remembered per frame for the checks of one publish (two checks count routing_replay)."""
    fact = _fact(df)
    if "count" not in fact:
        fact["count"] = len(fact["local"]) if fact.get("local") is not None else df.count()
    return fact["count"]


# The frame being validated, and its counter of the suite's queries and its checks' bad_rows (count_where).
_counting: ContextVar[tuple[DataFrame, Any, frozenset] | None] = ContextVar("clwl_counting", default=None)


def count_where(df: DataFrame, condition: str) -> int:
    """The rows of `df` meeting the SQL `condition`: from validate_table's one aggregate when `condition` is an
    ExtraCheck.bad_rows of the frame it validates, else one Spark query."""
    counting = _counting.get()
    if counting is not None and counting[0] is df and counting[1] is not None and condition in counting[2]:
        return counting[1].count(where_query(condition))
    return df.where(condition).count()


def _resolves(df: DataFrame, condition: str) -> bool:
    """Whether Spark can read `condition` over `df` (its columns are there): an analysis, no job. One that cannot
    stays out of the shared aggregate, and fails only its own check."""
    try:
        return df.where(condition).schema is not None
    except Exception:  # noqa: BLE001
        return False


def local_copy_of(df: DataFrame | None):
    """The pandas copy validate_table made of `df` (a small table), else None: a cross-table check reads it rather
    than run a Spark job over the other table."""
    return _fact(df).get("local")


def _columns_of(kwargs: Mapping) -> str:
    if kwargs.get("column"):
        return str(kwargs["column"])
    if kwargs.get("column_list"):
        return "(" + ", ".join(kwargs["column_list"]) + ")"
    if kwargs.get("column_A"):
        return f"{kwargs['column_A']},{kwargs['column_B']}"
    return ""


def _short(value: Any, limit: int = 80) -> str:
    s = json.dumps(value, default=str) if not isinstance(value, str) else value
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _reason(res: dict) -> str:
    exc = res.get("exception_info") or {}
    if exc.get("raised_exception"):
        return "error: " + _short(exc.get("exception_message") or "exception", 160)
    r = res.get("result") or {}
    cfg = res.get("expectation_config") or {}
    parts = []
    if cfg.get("description"):
        parts.append(cfg["description"])
    if cfg.get("type") == "unexpected_rows_expectation" and "observed_value" in r:
        parts.append(f"{r['observed_value']} unexpected rows")
        if r.get("examples"):
            parts.append("e.g. " + _short(r["examples"][:FAILURE_EXAMPLES], 160))
    elif "unexpected_count" in r:
        total = r.get("element_count")
        parts.append(f"{r['unexpected_count']} unexpected" + (f" of {total}" if total is not None else ""))
        ex = r.get("partial_unexpected_list") or []
        if ex:
            parts.append("e.g. " + _short(ex[:FAILURE_EXAMPLES]))
    elif "observed_value" in r:
        obs = r["observed_value"]
        details = (r.get("details") or {}).get("mismatched")
        parts.append("observed " + _short(details if details else obs))
    kw = cfg.get("kwargs") or {}
    if kw.get("row_condition"):
        parts.append(f"where {_condition_text(kw['row_condition'])}")
    return "; ".join(parts) or "failed"


def _condition_text(rc: Any) -> str:
    """A GX row condition (string, or 1.x condition object as JSON) as SQL-ish text."""
    if not isinstance(rc, dict):
        return str(rc)
    kind = rc.get("type")
    if kind == "nullity":
        return f"{rc['column']['name']} IS {'' if rc.get('is_null') else 'NOT '}NULL"
    if kind == "comparison":
        return f"{rc['column']['name']} {rc.get('operator')} {json.dumps(rc.get('parameter'), default=str)}"
    if kind in ("and", "or"):
        return f" {kind.upper()} ".join(f"({_condition_text(c)})" for c in rc.get("conditions", []))
    return str(rc.get("pass_through_filter") or json.dumps(rc, default=str))

# ------------------------------------------------------------------------------------------------ validate


def validate_table(
    df: DataFrame,
    suite: str | os.PathLike,
    extra_checks: Iterable[ExtraCheck] = (),
    *,
    cache: bool = True,
) -> ValidationOutcome:
    """Run the suite (a path, `<layer>.<table>`, or a bare table name) and the extra checks on `df`.

    `cache`: persist `df` for the validation when it is not already (GX runs several Spark jobs over it);
    it is unpersisted again afterwards.
    """
    data = load_suite_json(suite)
    table = data["name"]
    started = time.perf_counter()
    cached_here = False
    fact = _fact(df)
    local = fact.get("local")
    if local is None:
        local = fact["local"] = _local_copy(df)
    if local is None and cache and not df.storageLevel.useMemory and not df.storageLevel.useDisk:
        df = df.persist(StorageLevel.MEMORY_AND_DISK)
        cached_here = True
    extra_checks = list(extra_checks)
    conditions = frozenset(c.bad_rows for c in extra_checks if c.bad_rows and _resolves(df, c.bad_rows))
    queries = suite_queries(df, data, sorted(conditions))  # the suite's queries and these: one aggregate
    token = _counting.set((df, queries, conditions))
    try:
        gx_json = gx_validate(df, data, FAST_FORMAT, local, queries)
        failed_at = [i for i, r in enumerate(gx_json.get("results", [])) if not r.get("success")]
        if failed_at:
            _add_details(df, data, gx_json, failed_at, local, queries)
        gx_seconds = time.perf_counter() - started
        extras = [_run_extra(c, df, local) for c in extra_checks]
    finally:
        _counting.reset(token)
        if cached_here:
            df.unpersist()

    failed: list[str] = []
    for res in gx_json.get("results", []):
        if res.get("success"):
            continue
        cfg = res.get("expectation_config") or {}
        cols = _columns_of(cfg.get("kwargs") or {})
        failed.append(f"{cfg.get('type')}{' ' + cols if cols else ''}: {_reason(res)}")
    for x in extras:
        if not x["success"]:
            failed.append(f"{x['check']}{' ' + x['column'] if x['column'] else ''}: {x['reason'] or 'failed'}")

    success = bool(gx_json.get("success")) and all(x["success"] for x in extras)
    result_json = {
        "table": table,
        "suite": str(suite_path(suite)),
        "success": success,
        "failed": failed,
        "validated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "seconds": {"great_expectations": round(gx_seconds, 3),
                    "total": round(time.perf_counter() - started, 3)},
        "engine": "pandas" if local is not None else "spark",
        "statistics": gx_json.get("statistics"),
        "results": gx_json.get("results", []),
        "extra_checks": extras,
    }
    return ValidationOutcome(table=table, success=success, failed=failed, result_json=result_json)


def _expectation_key(cfg: Mapping) -> str:
    kwargs = {k: v for k, v in (cfg.get("kwargs") or {}).items() if k not in ("batch_id",)}
    return json.dumps({"type": cfg.get("type"), "kwargs": kwargs}, sort_keys=True, default=str)


def _add_details(df: DataFrame, data: dict, gx_json: dict, failed_at: list[int], local=None, queries=None) -> None:
    """Re-run the failed expectations with DETAIL_FORMAT and put their detailed results in place."""
    results = gx_json["results"]
    configs = [results[i].get("expectation_config") or {} for i in failed_at]
    detail = gx_validate(df, {**data, "expectations": configs}, DETAIL_FORMAT, local, queries)
    by_key = {_expectation_key(r.get("expectation_config") or {}): r for r in detail.get("results", [])}
    for i in failed_at:
        r = by_key.get(_expectation_key(results[i].get("expectation_config") or {}))
        if r is not None:
            results[i] = r
        cfg = results[i].get("expectation_config") or {}
        if cfg.get("type") == "unexpected_rows_expectation" and isinstance(results[i].get("result"), dict):
            results[i]["result"]["examples"] = _example_rows(df, cfg["kwargs"]["unexpected_rows_query"])


def _example_rows(df: DataFrame, query: str) -> list[dict]:
    """A few rows an unexpected_rows_query returns (GX's SUMMARY format gives only their count)."""
    view = f"clwl_quality_{uuid.uuid4().hex[:12]}"
    df.createOrReplaceTempView(view)
    try:
        rows = df.sparkSession.sql(query.replace("{batch}", view)).limit(FAILURE_EXAMPLES).collect()
        return _jsonable([r.asDict() for r in rows])
    except Exception as exc:  # examples are a courtesy; the count stands
        return [{"error": _short(str(exc), 160)}]
    finally:
        df.sparkSession.catalog.dropTempView(view)


def _run_extra(check: ExtraCheck, df: DataFrame, local=None) -> dict:
    try:
        res = check.local(local) if local is not None and check.local is not None else None
        if res is None:  # no pandas copy, or the check leaves this frame to Spark
            res = check.func(df)
    except Exception as exc:  # a check that cannot run is a failed check, with the reason
        res = CheckResult(False, f"error: {type(exc).__name__}: {_short(str(exc), 160)}")
    return {"check": check.name, "column": check.column, "description": check.description,
            "success": bool(res.success), "reason": res.reason, "observed": _jsonable(res.observed)}


def _jsonable(v: Any) -> Any:
    return json.loads(json.dumps(v, default=str))
