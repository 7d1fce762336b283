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
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import threading
import time
import uuid
import weakref
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from clwl.lake import GOLD_TABLES, Lake  # noqa: F401 - GOLD_TABLES: the suites' tables, publish order
from spark.config import PipelineConfig, expectations_dir
from spark.tables import read_table

log = logging.getLogger(__name__)

EXPECTATIONS_DIR = expectations_dir()  # the checkout's expectations/, or the installed copy

#: silver tables that feed gold and have a suite
SILVER_TABLES = ("message_events", "quarantine", "config_history")

# GX runs twice at most: the whole suite with BOOLEAN_ONLY (no per-expectation fetch of example values: on 2
# cores that halves the time of a passing suite), then, only when something failed, the failed expectations
# again with SUMMARY (unexpected counts and a few example values, never the full unexpected list).
FAST_FORMAT = {"result_format": "BOOLEAN_ONLY"}
DETAIL_FORMAT = {"result_format": "SUMMARY", "partial_unexpected_count": 5}
_EXAMPLES = 3  # example values quoted in a failure line
_BROADCAST_KEYS = 1_000_000  # check_keys_in broadcasts the checked table's keys up to this many
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


# ------------------------------------------------------------------------------------------------ GX


_gx_lock = threading.Lock()
_gx_state: dict[str, Any] = {}


def _gx_context():
    """One ephemeral GX context per process (in memory only: GX writes no files), with one Spark datasource.

    persist=False: GX would otherwise persist every batch and never unpersist it; the caller decides what to
    cache (validate_table caches the frame for the duration of the validation).
    """
    with _gx_lock:
        if "context" not in _gx_state:
            import great_expectations as gx

            logging.getLogger("great_expectations").setLevel(logging.WARNING)
            context = gx.get_context(mode="ephemeral")
            try:
                from great_expectations.data_context.types.base import ProgressBarsConfig

                context.variables.progress_bars = ProgressBarsConfig(globally=False)
            except Exception:  # cosmetic only
                pass
            _register_pandas_query_metrics()
            _gx_state["gx"] = gx
            _gx_state["context"] = context
            _gx_state["datasource"] = context.data_sources.add_spark(name="clwl_spark", persist=False)
            _gx_state["pandas"] = context.data_sources.add_pandas(name="clwl_pandas")
        return _gx_state["gx"], _gx_state["context"], _gx_state["datasource"]


# ------------------------------------------------------------------------------------------------ small tables

# The Spark frame behind the pandas copy being validated: GX's pandas engine has no SQL, so the suite's
# unexpected_rows_expectations are answered by Spark SQL over this frame (see _SparkQueries).
_spark_twin: ContextVar["_SparkQueries | None"] = ContextVar("clwl_spark_twin", default=None)
# What is known of a frame validated here, for the cross-table checks: its pandas copy and its row count.
_facts: "weakref.WeakKeyDictionary[DataFrame, dict]" = weakref.WeakKeyDictionary()


class _SparkQueries:
    """The unexpected_rows_query results of one suite over one Spark frame, from one Spark job: the queries'
    rows tagged with the query's number and unioned (all read the same small table), collected once. A set of
    queries that cannot be unioned (different columns) runs one query at a time."""

    def __init__(self, df: DataFrame, queries: Sequence[str]):
        self.df, self.queries = df, list(dict.fromkeys(queries))
        self._rows: dict[str, list | Exception] | None = None

    def _format(self, query: str, view: str) -> str:
        from great_expectations.expectations.metrics.query_metric_provider import QueryMetricProvider

        return QueryMetricProvider._format_query(query, batch=view)  # GX's own substitution of {batch}

    def rows(self, query: str) -> list:
        if self._rows is None or query not in self._rows:
            spark = self.df.sparkSession
            view = f"clwl_batch_{uuid.uuid4().hex[:12]}"
            self.df.createOrReplaceTempView(view)
            try:
                wanted = self.queries if query in self.queries else [query]
                try:
                    union = " UNION ALL ".join(f"SELECT {i} AS __clwl_query, * FROM ({self._format(q, view)})"
                                               for i, q in enumerate(wanted))
                    got: dict[str, list] = {q: [] for q in wanted}
                    for r in spark.sql(union).collect():
                        d = r.asDict()
                        got[wanted[d.pop("__clwl_query")]].append(d)
                except Exception:  # noqa: BLE001 - a query that fails, or queries of different columns
                    got = {}
                    for q in wanted:  # one at a time: a failing query fails its own expectation only, as in GX
                        try:
                            got[q] = [r.asDict() for r in spark.sql(self._format(q, view)).collect()]
                        except Exception as exc:  # noqa: BLE001 - raised again for that query's metrics
                            got[q] = exc
            finally:
                spark.catalog.dropTempView(view)
            self._rows = {**(self._rows or {}), **got}
        rows = self._rows[query]
        if isinstance(rows, Exception):
            raise rows
        return rows


def _register_pandas_query_metrics() -> None:
    """unexpected_rows_query.row_count / .table for GX's pandas engine, from the Spark twin of the batch (GX
    implements them for SQL and Spark only). Same values as GX's Spark implementations: the count of the
    query's rows, and up to MAX_RESULT_RECORDS of them as dicts."""
    from great_expectations.constants import MAX_RESULT_RECORDS
    from great_expectations.execution_engine import PandasExecutionEngine
    from great_expectations.expectations.metrics.metric_provider import metric_value
    from great_expectations.expectations.metrics.query_metrics.query_row_count.unexpected_rows_query_row_count import (
        UnexpectedRowsQueryRowCount,
    )
    from great_expectations.expectations.metrics.query_metrics.query_table.unexpected_rows_query_table import (
        UnexpectedRowsQueryTable,
    )

    def twin_rows(cls, metric_value_kwargs: dict) -> list:
        twin = _spark_twin.get()
        if twin is None:
            raise RuntimeError("unexpected_rows_expectation on a pandas batch needs the Spark frame it copies")
        return twin.rows(cls._get_query_from_metric_value_kwargs(metric_value_kwargs))

    class _RowCountOnTwin(UnexpectedRowsQueryRowCount):  # noqa: F841 - registered with GX by its metaclass
        @metric_value(engine=PandasExecutionEngine)
        def _pandas(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
            return len(twin_rows(cls, metric_value_kwargs))

    class _TableOnTwin(UnexpectedRowsQueryTable):  # noqa: F841
        @metric_value(engine=PandasExecutionEngine)
        def _pandas(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
            rows = twin_rows(cls, metric_value_kwargs)
            return list(rows) if metric_value_kwargs.get("fetch_all", False) else rows[:MAX_RESULT_RECORDS]


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


def _build_suite(gx, data: dict, unique_name: str):
    """An ExpectationSuite from JSON, strictly: GX drops an invalid expectation with only a log line, the gate
    must not silently lose a check."""
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    expectations = []
    for i, raw in enumerate(data["expectations"]):
        raw = dict(raw)
        raw.pop("id", None)
        raw.pop("rendered_content", None)
        try:
            expectations.append(ExpectationConfiguration(**raw).to_domain_obj())
        except Exception as exc:
            raise ValueError(f"suite {data['name']}: expectation #{i} ({raw.get('type')}) is invalid: {exc}") from exc
    return gx.ExpectationSuite(name=unique_name, expectations=expectations, meta=data.get("meta") or None)


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
            parts.append("e.g. " + _short(r["examples"][:_EXAMPLES], 160))
    elif "unexpected_count" in r:
        total = r.get("element_count")
        parts.append(f"{r['unexpected_count']} unexpected" + (f" of {total}" if total is not None else ""))
        ex = r.get("partial_unexpected_list") or []
        if ex:
            parts.append("e.g. " + _short(ex[:_EXAMPLES]))
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


def _gx_validate(df: DataFrame, data: dict, result_format: dict, local=None) -> dict:
    """One GX run of the suite `data` on `df`, or on its pandas copy `local` when given."""
    gx, context, datasource = _gx_context()
    if local is not None:
        datasource = _gx_state["pandas"]
    tag = uuid.uuid4().hex[:10]
    with _gx_lock:  # the fluent datasource's asset list is shared state
        asset = datasource.add_dataframe_asset(name=f"{data['name']}-{tag}")
        batch_def = asset.add_batch_definition_whole_dataframe(f"whole-{tag}")
        suite = context.suites.add(_build_suite(gx, data, f"{data['name']}-{tag}"))
        vd = context.validation_definitions.add(
            gx.ValidationDefinition(name=f"{data['name']}-{tag}", data=batch_def, suite=suite)
        )
    queries = [e["kwargs"]["unexpected_rows_query"] for e in data["expectations"]
               if e.get("type") == "unexpected_rows_expectation" and "unexpected_rows_query" in (e.get("kwargs") or {})]
    token = _spark_twin.set(_SparkQueries(df, queries) if local is not None else None)
    try:
        result = vd.run(batch_parameters={"dataframe": df if local is None else local}, result_format=result_format)
        out = result.to_json_dict()
        if local is not None:  # the pandas engine also lists row indexes; Spark's result has no such key
            for r in out.get("results", []):
                if isinstance(r.get("result"), dict):
                    r["result"].pop("partial_unexpected_index_list", None)
        return out
    finally:  # keep the ephemeral context from growing run after run
        _spark_twin.reset(token)
        with _gx_lock:
            for remove in (
                lambda: context.validation_definitions.delete(vd.name),
                lambda: context.suites.delete(suite.name),
                lambda: datasource.delete_asset(asset.name),
            ):
                try:
                    remove()
                except Exception:  # pragma: no cover - cleanup only
                    pass


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
    try:
        gx_json = _gx_validate(df, data, FAST_FORMAT, local)
        failed_at = [i for i, r in enumerate(gx_json.get("results", [])) if not r.get("success")]
        if failed_at:
            _add_details(df, data, gx_json, failed_at, local)
        gx_seconds = time.perf_counter() - started
        extras = [_run_extra(c, df, local) for c in extra_checks]
    finally:
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


def _add_details(df: DataFrame, data: dict, gx_json: dict, failed_at: list[int], local=None) -> None:
    """Re-run the failed expectations with DETAIL_FORMAT and put their detailed results in place."""
    results = gx_json["results"]
    configs = [results[i].get("expectation_config") or {} for i in failed_at]
    detail = _gx_validate(df, {**data, "expectations": configs}, DETAIL_FORMAT, local)
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
        rows = df.sparkSession.sql(query.replace("{batch}", view)).limit(_EXAMPLES).collect()
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


# ------------------------------------------------------------------------------------------------ extra checks


def check_run_date(run_date: dt.date | str) -> ExtraCheck:
    """Every row belongs to the run date being published (publish replaces only that partition)."""
    day = _as_date(run_date)

    def run(df: DataFrame) -> CheckResult:
        bad = df.where(F.col("run_date").isNull() | (F.col("run_date") != F.lit(day))).groupBy("run_date").count()
        rows = bad.limit(_EXAMPLES).collect()
        if not rows:
            return CheckResult(True, observed=0)
        n = bad.agg(F.sum("count")).first()[0]
        return CheckResult(False, f"{n} rows not of run date {day} (e.g. {[str(r.run_date) for r in rows]})", n)

    def local(pdf) -> CheckResult | None:
        if "run_date" not in pdf.columns or not all(v is None or type(v) is dt.date for v in pdf["run_date"]):
            return None  # not a date column: Spark's comparison (with its casts) decides
        bad = pdf["run_date"][[v is None or v != day for v in pdf["run_date"]]]
        if bad.empty:
            return CheckResult(True, observed=0)
        n = len(bad)
        return CheckResult(False, f"{n} rows not of run date {day} (e.g. {[str(v) for v in dict.fromkeys(bad)][:_EXAMPLES]})",
                           n)

    return ExtraCheck("run_date_is_the_run_date", run, "run_date", f"every row has run_date = {day}", local)


def check_row_count(other: DataFrame | None, other_name: str) -> ExtraCheck:
    """The table has as many rows as `other` (None: the other table is missing, which fails the check)."""

    def run(df: DataFrame) -> CheckResult:
        if other is None:
            return CheckResult(False, f"{other_name} not found: cannot reconcile the row count")
        mine, theirs = row_count(df), row_count(other)
        return CheckResult(mine == theirs, "" if mine == theirs else f"{mine} rows, {other_name} has {theirs}",
                           {"rows": mine, other_name: theirs})

    return ExtraCheck(f"row_count_equals_{other_name.replace('/', '_')}", run, None,
                      f"row count = rows of {other_name} for the run date")


def check_keys_in(other: DataFrame, keys: Sequence[str], other_name: str) -> ExtraCheck:
    """Every key of the table is a key of `other` (e.g. every stuck message is a replayed message)."""

    def run(df: DataFrame) -> CheckResult:
        wanted = df.select(*keys).distinct()
        known = other.select(*keys)
        if wanted.count() <= _BROADCAST_KEYS:
            # The usual case (a few thousand stuck messages against millions replayed): look the keys up in one
            # pass over `other` with the keys broadcast. A plain anti join cannot broadcast its left side, and
            # shuffled all 10M replayed keys (15 s at 10M messages).
            known = known.join(F.broadcast(wanted), list(keys), "left_semi")
        missing = wanted.join(known.distinct(), list(keys), "left_anti")
        rows = missing.limit(_EXAMPLES).collect()
        if not rows:
            return CheckResult(True, observed=0)
        n = missing.count()
        return CheckResult(False, f"{n} keys not in {other_name}, e.g. {[tuple(r) for r in rows]}", n)

    def local(pdf) -> CheckResult | None:
        theirs = _fact(other).get("local")
        if theirs is None or any(pdf[k].isna().any() or theirs[k].isna().any() for k in keys):
            return None  # a null key never joins in Spark, but equals another null in pandas: Spark decides
        known = set(theirs[list(keys)].itertuples(index=False, name=None))
        missing = [k for k in dict.fromkeys(pdf[list(keys)].itertuples(index=False, name=None)) if k not in known]
        if not missing:
            return CheckResult(True, observed=0)
        n = len(missing)
        return CheckResult(False, f"{n} keys not in {other_name}, e.g. {missing[:_EXAMPLES]}", n)

    return ExtraCheck(f"keys_in_{other_name.replace('/', '_')}", run, "(" + ", ".join(keys) + ")",
                      f"every ({', '.join(keys)}) is in {other_name}", local)


def check_distribution_totals(replay: DataFrame) -> ExtraCheck:
    """Expected totals against the replay, per (sending_qmgr, queue, interval, source).

    source observed_destination (per sender): the comparison covers the messages whose destination was observed,
    so sum(expected) = routed routing_replay messages of that sender and queue with an observed_qmgr and
    interval_start <= put_time < interval_end, and sum(observed) = sum(expected) (each such message counts once
    on each side).
    source accounting (sending_qmgr '*', all senders): expected counts the messages delivered in the interval to
    the receivers that report accounting, by delivery time (a held message counts when it is released, or not at
    all), which routing_replay alone does not give; the check is the bound sum(expected) <= routed messages of
    the queue put before interval_end.
    source channel_statistics (per sending queue manager and channel, queue '*'): the same kind of bound, over the
    sender's routed messages put before interval_end.
    Routed = error null.
    """

    def run(dist: DataFrame) -> CheckResult:
        totals = dist.groupBy("sending_qmgr", "queue", "interval_start", "interval_end", "source").agg(
            F.sum("expected").alias("expected_total"), F.sum("observed").alias("observed_total")
        )
        routed = replay.where(F.col("error").isNull()).select(
            F.col("sending_qmgr").alias("r_sender"), F.col("queue").alias("r_queue"), "put_time",
            F.col("observed_qmgr").isNotNull().alias("r_observed"),
        )
        keys = ["sending_qmgr", "queue", "interval_start", "interval_end", "source", "expected_total",
                "observed_total"]
        bounds = totals.select(F.explode(F.array("interval_start", "interval_end")).alias("t"))
        if bounds.where(F.unix_micros("t") % 1_000_000 != 0).isEmpty():
            # Interval bounds on whole seconds (amqsmon's always are): the messages can be counted per second
            # first, exactly, which turns the joins and the running count over every replayed message (8.7 s
            # for the distribution's checks at 10M messages) into ones over at most 86,400 rows per queue. For
            # the half-open [start, end) the bucket is the second the message falls in; for "put up to the end"
            # it is the next whole second (a message at 10:00:00.000 counts for an interval ending at 10:00:00).
            from spark.detect import ceil_second, floor_second

            put_time = F.col("put_time")
            observed_per_s = (routed.where("r_observed")
                              .groupBy("r_sender", "r_queue", floor_second(put_time).alias("put_time"))
                              .agg(F.count(F.lit(1)).alias("n")))
            put_per_s = (routed.groupBy("r_sender", "r_queue", ceil_second(put_time).alias("put_time"))
                         .agg(F.count(F.lit(1)).alias("n")))
        else:
            observed_per_s = routed.where("r_observed").withColumn("n", F.lit(1))
            put_per_s = routed.select("r_sender", "r_queue", "put_time", F.lit(1).alias("n"))
        # Equi-joins on the keys, then the range condition: no OR in a join (that would be a nested loop).
        per_sender = totals.where(F.col("source") == "observed_destination").join(
            observed_per_s,
            (F.col("sending_qmgr") == F.col("r_sender")) & (F.col("queue") == F.col("r_queue"))
            & (F.col("put_time") >= F.col("interval_start")) & (F.col("put_time") < F.col("interval_end")),
            "left",
        )
        # Accounting: messages of the queue put up to each interval's end, as a running count over the queue's
        # messages and interval ends in time order (a join on put_time <= interval_end would pair every
        # interval with every earlier message).
        # The count runs per queue for accounting and per sender for channel statistics ("part").
        by_sender = F.col("source") == "channel_statistics"
        marks = totals.where(F.col("source") != "observed_destination").select(
            *keys, F.when(by_sender, F.concat(F.lit("s|"), "sending_qmgr"))
            .otherwise(F.concat(F.lit("q|"), "queue")).alias("part"),
            F.col("interval_end").alias("t"), F.lit(0).cast("long").alias("is_msg"))
        msgs = put_per_s.select(F.concat(F.lit("q|"), "r_queue").alias("part"), F.col("put_time").alias("t"),
                                F.col("n").cast("long").alias("is_msg"))
        if not totals.where(by_sender).isEmpty():
            msgs = msgs.unionByName(put_per_s.select(F.concat(F.lit("s|"), "r_sender").alias("part"),
                                                     F.col("put_time").alias("t"),
                                                     F.col("n").cast("long").alias("is_msg")))
        running = Window.partitionBy("part").orderBy("t", F.desc("is_msg")).rowsBetween(
            Window.unboundedPreceding, Window.currentRow)
        accounting = (marks.unionByName(msgs, allowMissingColumns=True)
                      .withColumn("replayed", F.sum("is_msg").over(running))
                      .where(F.col("is_msg") == 0).select(*keys, "replayed"))
        counted = (per_sender.groupBy(*keys).agg(F.coalesce(F.sum("n"), F.lit(0)).alias("replayed"))
                   .unionByName(accounting))
        exact = F.col("source") == "observed_destination"
        bad = counted.where(
            (exact & ((F.col("expected_total") != F.col("replayed")) | (F.col("observed_total") != F.col("replayed"))))
            | (~exact & (F.col("expected_total") > F.col("replayed")))
        )
        rows = bad.orderBy("queue", "sending_qmgr", "interval_start", "source").limit(_EXAMPLES).collect()
        if not rows:
            return CheckResult(True, observed=0)
        n = bad.count()
        ex = [f"{r.sending_qmgr}/{r.queue}/{r.source} from {r.interval_start.isoformat()}: expected "
              f"{r.expected_total}, observed {r.observed_total}, "
              + (f"replayed with an observed destination {r.replayed}" if r.source == "observed_destination"
                 else f"replayed before the interval ended {r.replayed}") for r in rows]
        return CheckResult(False, f"{n} intervals where the totals do not reconcile with the replay "
                                  f"({'; '.join(ex)})", {"intervals": n, "examples": ex})

    return ExtraCheck("expected_totals_reconcile_with_replay", run, "expected",
                      "observed_destination: sum(expected) = sum(observed) = replayed messages with an observed "
                      "destination in the interval; accounting (per queue) and channel statistics (per sender): "
                      "sum(expected) <= messages put before its end")


def check_run_summary(run_id: str, replay: DataFrame | None, stuck: DataFrame | None,
                      distribution: DataFrame | None) -> ExtraCheck:
    """The run summary row of `run_id` exists, and its counts match the gold tables published with it:
    messages_replayed = routing_replay rows, messages_stuck = stuck_messages rows,
    distribution_unexpected = distribution rows with verdict 'unexpected'."""

    def run(df: DataFrame) -> CheckResult:
        rows = df.where(F.col("run_id") == run_id).collect()
        if len(rows) != 1:
            return CheckResult(False, f"{len(rows)} rows for run_id {run_id!r}, want 1", len(rows))
        r = rows[0]
        actual = {}
        if replay is not None:
            actual["messages_replayed"] = row_count(replay)
        if stuck is not None:
            actual["messages_stuck"] = row_count(stuck)
        if distribution is not None:
            copy = _fact(distribution).get("local")
            actual["distribution_unexpected"] = (
                int((copy["verdict"] == "unexpected").sum()) if copy is not None
                else distribution.where(F.col("verdict") == "unexpected").count())
        wrong = {k: {"summary": r[k], "table": v} for k, v in actual.items() if r[k] != v}
        return CheckResult(not wrong, "" if not wrong else "; ".join(
            f"{k} = {w['summary']}, the table says {w['table']}" for k, w in wrong.items()), actual)

    return ExtraCheck("run_summary_counts_match_gold", run, None,
                      "messages_replayed, messages_stuck, distribution_unexpected match the gold tables")


def _as_date(d: dt.date | str) -> dt.date:
    if isinstance(d, dt.datetime):
        return d.date()
    return d if isinstance(d, dt.date) else dt.date.fromisoformat(str(d))


# ------------------------------------------------------------------------------------------------ silver


def read_delta_if_exists(spark: SparkSession, config: PipelineConfig, key: str) -> DataFrame | None:
    """The table ``key`` of the lake (``"silver.quarantine"``) as a DataFrame; None when it is not there."""
    lake = Lake(config.lake)
    return read_table(spark, lake, key) if lake.exists(key) else None


def events_for_run_date(events: DataFrame, run_date: dt.date | str) -> DataFrame:
    """silver/message_events rows of one run date: by its `run_date` column when it has one, else by the UTC
    date of put_time (the session time zone is UTC)."""
    day = _as_date(run_date)
    if "run_date" in events.columns:
        return events.where(F.col("run_date") == F.lit(day))
    return events.where(F.to_date("put_time") == F.lit(day))


def silver_tables(spark: SparkSession, config: PipelineConfig, run_date: dt.date | str,
                  skip: Iterable[str] = ()) -> dict[str, DataFrame]:
    """The silver tables that have a suite and exist in the lake, message_events narrowed to the run date."""
    out = {}
    for name in SILVER_TABLES:
        if name in skip:
            continue
        df = read_delta_if_exists(spark, config, f"silver.{name}")
        if df is not None:
            out[name] = events_for_run_date(df, run_date) if name == "message_events" else df
    return out


def default_cross_checks(
    spark: SparkSession,
    config: PipelineConfig,
    run_date: dt.date | str,
    run_id: str,
    tables: Mapping[str, DataFrame],
    silver: Mapping[str, DataFrame] | None = None,
) -> dict[str, list[ExtraCheck]]:
    """The checks publish runs besides the suites, per gold table."""
    if silver is None:
        silver = silver_tables(spark, config, run_date)
    if "message_events" in silver:
        silver = {**silver, "message_events": events_for_run_date(silver["message_events"], run_date)}
    replay = tables.get("routing_replay")
    checks: dict[str, list[ExtraCheck]] = {name: [check_run_date(run_date)] for name in tables}
    if replay is not None:
        checks["routing_replay"].append(check_row_count(silver.get("message_events"), "silver/message_events"))
        if "stuck_messages" in tables:
            checks["stuck_messages"].append(
                check_keys_in(replay, ["sending_qmgr", "msg_id"], "gold/routing_replay"))
        if "distribution" in tables:
            checks["distribution"].append(check_distribution_totals(replay))
    if "run_summary" in tables:
        checks["run_summary"].append(check_run_summary(
            run_id, replay, tables.get("stuck_messages"), tables.get("distribution")))
    return checks
