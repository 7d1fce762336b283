"""Great Expectations for the quality gate (spark/quality.py): one ephemeral GX context per process (GX writes no
files) with a Spark and a pandas datasource, a suite built strictly from its JSON, and one validation run of it on a
Spark frame or on that frame's pandas copy. A suite's unexpected_rows_expectations are answered by Spark SQL over the
frame, on either engine (GX's pandas engine has no SQL; its Spark engine runs two jobs per query): their row counts
in one aggregate, their rows only where a count is not zero.
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


# The Spark frame a suite is validated on (or whose pandas copy is): the suite's unexpected_rows_expectations
# are answered from it, their row counts in one aggregate (see _SparkQueries). GX's own Spark implementation
# runs two jobs per such expectation (the count, and up to 200 rows even when there are none), and its pandas
# engine has no SQL at all.
_spark_twin: ContextVar["_SparkQueries | None"] = ContextVar("clwl_spark_twin", default=None)

_WHERE = "SELECT * FROM {batch} WHERE "


class _SparkQueries:
    """The unexpected_rows_query results of one suite over one Spark frame.

    The row counts of all the suite's queries come from one Spark job: a query of the form
    ``SELECT * FROM {batch} WHERE <condition>`` (every suite's) is counted as ``count_if((<condition>))``, the same
    rows, all in one aggregate, so one scan of the frame; others are tagged, unioned and counted per tag. A set
    that cannot be counted so (a query that fails) is counted one query at a time: a failing query fails its own
    expectation only, as in GX. A query's rows are fetched only when its count is not zero."""

    def __init__(self, df: DataFrame, queries: Sequence[str]):
        self.df, self.queries = df, list(dict.fromkeys(queries))
        self._counts: dict[str, int | Exception] = {}
        self._rows: dict[tuple[str, bool], list] = {}

    def _format(self, query: str, view: str) -> str:
        from great_expectations.expectations.metrics.query_metric_provider import QueryMetricProvider

        return QueryMetricProvider._format_query(query, batch=view)  # GX's own substitution of {batch}

    def _sql(self, build):
        """`build(view)` run as Spark SQL over the frame, collected, with the frame as a temporary view."""
        spark = self.df.sparkSession
        view = f"clwl_batch_{uuid.uuid4().hex[:12]}"
        self.df.createOrReplaceTempView(view)
        try:
            return spark.sql(build(view)).collect()
        finally:
            spark.catalog.dropTempView(view)

    def _count_all(self, wanted: list[str]) -> None:
        def aggregate(view: str) -> str:
            # each condition formatted as GX would format the whole query, so {batch} inside it is the view too
            return "SELECT " + ", ".join(
                f"count_if(({self._format(q, view)[len(_WHERE.format(batch=view)):]})) AS c{i}"
                for i, q in enumerate(wanted)) + f" FROM {view}"

        def union(view: str) -> str:
            tagged = " UNION ALL ".join(f"SELECT {i} AS q FROM ({self._format(q, view)})" for i, q in enumerate(wanted))
            return f"SELECT q, count(1) AS n FROM ({tagged}) GROUP BY q"

        try:
            if all(q.startswith(_WHERE) for q in wanted):
                row = self._sql(aggregate)[0]
                self._counts.update({q: int(row[f"c{i}"]) for i, q in enumerate(wanted)})
            else:
                got = {int(r["q"]): int(r["n"]) for r in self._sql(union)}
                self._counts.update({q: got.get(i, 0) for i, q in enumerate(wanted)})
        except Exception:  # noqa: BLE001 - a query that fails (or one that is not a bare condition): one at a time
            for q in wanted:
                try:
                    self._counts[q] = int(self._sql(lambda v, q=q: f"SELECT count(1) AS n FROM ({self._format(q, v)})")
                                          [0]["n"])
                except Exception as exc:  # noqa: BLE001 - raised again for that query's metrics
                    self._counts[q] = exc

    def count(self, query: str) -> int:
        if query not in self._counts:
            self._count_all([q for q in self.queries if q not in self._counts] if query in self.queries else [query])
        n = self._counts[query]
        if isinstance(n, Exception):
            raise n
        return n

    def rows(self, query: str, fetch_all: bool = False) -> list:
        """The query's rows as dicts, up to GX's MAX_RESULT_RECORDS unless `fetch_all` (GX's own limit)."""
        from great_expectations.constants import MAX_RESULT_RECORDS

        if self.count(query) == 0:
            return []  # what the query returns, without a job
        key = (query, fetch_all)
        if key not in self._rows:
            self._rows[key] = [r.asDict() for r in self._sql(
                lambda v: f"SELECT * FROM ({self._format(query, v)})" + ("" if fetch_all else f" LIMIT {MAX_RESULT_RECORDS}"))]
        return self._rows[key]


def _register_pandas_query_metrics() -> None:
    """unexpected_rows_query.row_count / .table from the Spark frame of the batch (_SparkQueries): for GX's pandas
    engine, which has none, and for its Spark engine, in one job for the whole suite instead of two per query.
    Same values as GX's Spark implementations: the count of the query's rows, and up to MAX_RESULT_RECORDS of
    them as dicts (all with fetch_all). Without a frame set (GX run by someone else) GX's own Spark
    implementations answer."""
    from great_expectations.expectations.metrics.query_metrics.query_row_count.unexpected_rows_query_row_count import (
        UnexpectedRowsQueryRowCount,
    )
    from great_expectations.expectations.metrics.query_metrics.query_table.unexpected_rows_query_table import (
        UnexpectedRowsQueryTable,
    )

    gx_count, gx_table = UnexpectedRowsQueryRowCount._spark, UnexpectedRowsQueryTable._spark

    def twin(required: bool) -> "_SparkQueries | None":
        t = _spark_twin.get()
        if t is None and required:
            raise RuntimeError("unexpected_rows_expectation on a pandas batch needs the Spark frame it copies")
        return t

    def query(cls, metric_value_kwargs: dict) -> str:
        return cls._get_query_from_metric_value_kwargs(metric_value_kwargs)

    # GX logs a WARNING for each metric registered over its own: that is the point here, not news for a task log
    quiet = logging.getLogger("great_expectations.expectations.registry")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        _define_twin_metrics(twin, query, gx_count, gx_table)
    finally:
        quiet.setLevel(level)


def _define_twin_metrics(twin, query, gx_count, gx_table) -> None:
    from great_expectations.execution_engine import PandasExecutionEngine, SparkDFExecutionEngine
    from great_expectations.expectations.metrics.metric_provider import metric_value
    from great_expectations.expectations.metrics.query_metrics.query_row_count.unexpected_rows_query_row_count import (
        UnexpectedRowsQueryRowCount,
    )
    from great_expectations.expectations.metrics.query_metrics.query_table.unexpected_rows_query_table import (
        UnexpectedRowsQueryTable,
    )

    class _RowCountOnTwin(UnexpectedRowsQueryRowCount):  # noqa: F841 - registered with GX by its metaclass
        @metric_value(engine=PandasExecutionEngine)
        def _pandas(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
            return twin(True).count(query(cls, metric_value_kwargs))

        @metric_value(engine=SparkDFExecutionEngine)
        def _spark(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
            t = twin(False)
            if t is None:
                return gx_count(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                                         runtime_configuration)
            return t.count(query(cls, metric_value_kwargs))

    class _TableOnTwin(UnexpectedRowsQueryTable):  # noqa: F841
        @metric_value(engine=PandasExecutionEngine)
        def _pandas(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
            return twin(True).rows(query(cls, metric_value_kwargs), metric_value_kwargs.get("fetch_all", False))

        @metric_value(engine=SparkDFExecutionEngine)
        def _spark(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
            t = twin(False)
            if t is None:
                return gx_table(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                                         runtime_configuration)
            return t.rows(query(cls, metric_value_kwargs), metric_value_kwargs.get("fetch_all", False))


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


def unexpected_rows_queries(data: dict) -> list[str]:
    """The unexpected_rows_query of each of the suite's unexpected_rows_expectations."""
    return [e["kwargs"]["unexpected_rows_query"] for e in data["expectations"]
            if e.get("type") == "unexpected_rows_expectation" and "unexpected_rows_query" in (e.get("kwargs") or {})]


def where_query(condition: str) -> str:
    """The unexpected_rows_query of the rows meeting the SQL `condition` (its braces kept, as GX formats the
    query)."""
    return _WHERE + condition.replace("{", "{{").replace("}", "}}")


def suite_queries(df: DataFrame, data: dict, conditions: Sequence[str] = ()) -> "_SparkQueries | None":
    """The counter of the suite's unexpected_rows queries over `df`, and of the rows meeting each of
    `conditions` (a table's own checks, spark/quality.py's ExtraCheck.bad_rows): all counted in one aggregate."""
    return _SparkQueries(df, unexpected_rows_queries(data) + [where_query(c) for c in conditions])


def gx_validate(df: DataFrame, data: dict, result_format: dict, local=None, queries=None) -> dict:
    """One GX run of the suite `data` on `df`, or on its pandas copy `local` when given. `queries`: the suite's
    counter (suite_queries) when the caller shares it between runs and its own checks; else one made here."""
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
    token = _spark_twin.set(queries if queries is not None else _SparkQueries(df, unexpected_rows_queries(data)))
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
