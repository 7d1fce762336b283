"""PySpark jobs of clwl-analytics: the Delta session, ingest, replay, detect, the quality gate and the publish (what
runs without Spark, such as the report, `clwl explain` and `clwl check`, lives in clwl/).

`get_spark`/`stop_spark` are loaded lazily so that `spark.config` (and DAG files using it) import without
pulling in pyspark.
"""

from spark.config import PipelineConfig

__all__ = ["PipelineConfig", "get_spark", "stop_spark"]


def __getattr__(name: str):
    if name in ("get_spark", "stop_spark"):
        from spark import session

        return getattr(session, name)
    raise AttributeError(f"module 'spark' has no attribute {name!r}")
