"""clwl: the IBM MQ cluster workload management (CLWL) algorithm, replayed offline.

Pure Python: this package imports neither pyspark nor airflow, so the algorithm can be read, tested and
run on its own (``clwl route``) and called unchanged from the Spark jobs in ``spark/``.
"""

__version__ = "0.1.0"  # the one place the version is written (pyproject.toml reads it)
