"""Stage a run date's gold.queue_depth (clwl/analyses/depth.py, docs/depth.md) at detect time, so that the publish
writes it with the day's other gold tables, all or nothing.

The rebuild is pure Python on the driver (clwl/analyses/depth_day.py: the day's bronze.activity_operations and QLOCAL
captures read with pyarrow, started from the previous run date's published line); Spark only writes the rows.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from clwl.analyses.depth_day import day_depth, gold_rows
from clwl.days import RunDate
from spark.run import PipelineRun
from spark.tables import TABLES

QUEUE_DEPTH = TABLES["gold.queue_depth"]


def depth_frame(spark: SparkSession, run: PipelineRun, run_date: RunDate) -> DataFrame:
    """``run_date``'s gold.queue_depth rows: the main lake's bronze, the previous day as the output lake published
    it."""
    rebuilt, _ = day_depth(run.lake, str(run_date), gold_lake=run.out_lake)
    rows = [QUEUE_DEPTH.row(run_date=run_date.day, **r) for r in gold_rows(rebuilt)]
    return spark.createDataFrame(rows, QUEUE_DEPTH.schema)
