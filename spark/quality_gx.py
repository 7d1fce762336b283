"""Great Expectations for the quality gate (spark/quality.py): one ephemeral GX context per process (GX writes no
files) with a Spark and a pandas datasource, a suite built strictly from its JSON, and one validation run of it on a
Spark frame or on that frame's pandas copy. GX's pandas engine has no SQL: a suite's unexpected_rows_expectations on
a pandas copy are answered by Spark SQL over the frame it copies, all of them in one Spark job.
"""

from __future__ import annotations

import logging
import threading
import uuid
from contextvars import ContextVar
from typing import Any, Sequence

from pyspark.sql import DataFrame

# Before GX is first imported (here, in _gx_context): its import logs ~200 INFO lines (great_expectations.
# _docs_decorators), which a root logger at INFO, Airflow's, prints into every publish task's log.
logging.getLogger("great_expectations").setLevel(logging.WARNING)

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


# The Spark frame behind the pandas copy being validated: GX's pandas engine has no SQL, so the suite's
# unexpected_rows_expectations are answered by Spark SQL over this frame (see _SparkQueries).
_spark_twin: ContextVar["_SparkQueries | None"] = ContextVar("clwl_spark_twin", default=None)


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


def gx_validate(df: DataFrame, data: dict, result_format: dict, local=None) -> dict:
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
