"""The one Delta-enabled SparkSession factory, used by every job and every test.

The Delta JVM jars come from Maven Central through Spark's Ivy resolution on the first start
(`configure_spark_with_delta_pip`), cached in an Ivy directory afterwards.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

from delta import configure_spark_with_delta_pip
from pyspark.errors import PySparkRuntimeError
from pyspark.sql import SparkSession

from spark.config import REPO_ROOT, PipelineConfig

log = logging.getLogger(__name__)

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

# Driver memory for local mode, where the driver is also the only executor. The target machine has 24 GiB and
# 2 cores, shared with Airflow and pytest; 4 GiB is ample for the sample estate and leaves room for the rest.
DEFAULT_DRIVER_MEMORY = "4g"

# Delta 4.4's compile dependencies (delta-kernel-defaults mostly) drag in ~150 MB of jars that pyspark already
# ships in pyspark/jars, in other versions (Hadoop client, Parquet, Jackson 2.13, log4j, ...). Spark's own copies
# win anyway (the driver's class loader is parent-first), so skip downloading them: the first start fetches
# about a fifth as much. tests/spark checks each one is still in pyspark/jars.
PROVIDED_BY_PYSPARK = (
    "org.apache.hadoop:hadoop-client-api",
    "org.apache.hadoop:hadoop-client-runtime",
    "org.apache.parquet:parquet-hadoop",
    "org.apache.parquet:parquet-column",
    "org.apache.parquet:parquet-common",
    "org.apache.parquet:parquet-encoding",
    "org.apache.parquet:parquet-format-structures",
    "org.apache.parquet:parquet-jackson",
    "com.fasterxml.jackson.core:jackson-core",
    "com.fasterxml.jackson.core:jackson-databind",
    "com.fasterxml.jackson.core:jackson-annotations",
    "org.apache.logging.log4j:log4j-api",
    "org.apache.logging.log4j:log4j-core",
    "org.apache.logging.log4j:log4j-slf4j2-impl",
    "org.slf4j:slf4j-api",
    "org.xerial.snappy:snappy-java",
    "com.github.luben:zstd-jni",
    "io.airlift:aircompressor",
    "org.roaringbitmap:RoaringBitmap",
    "org.locationtech.jts:jts-core",
    "com.google.code.findbugs:jsr305",
    "commons-pool:commons-pool",
)

_START_ATTEMPTS = 3  # the first start downloads from Maven Central; ride out a transient network failure


def delta_packages() -> str:
    """The `spark.jars.packages` value that configure_spark_with_delta_pip picks from the installed pyspark and
    delta-spark: for pyspark 4.1.3 + delta-spark 4.4.0, `io.delta:delta-spark_4.1_2.13:4.4.0`.

    delta-spark is pinned to 4.4.0, not 4.4.1: 4.4.1 was published to PyPI only, and Maven Central has no
    `delta-spark_4.1_2.13:4.4.1`, so Ivy fails with "not found" at session start.
    """
    return configure_spark_with_delta_pip(SparkSession.Builder())._options["spark.jars.packages"]


def baked_delta_jars() -> list[str]:
    """The Delta jars resolved at image build time (docker/bake-delta-jars.sh), from CLWL_DELTA_JARS: a folder
    of jars, or a comma-separated list of jar files. Empty when unset: then Ivy resolves `delta_packages()`.

    The folder must hold the very jar `delta_packages()` names (Ivy's `<group>_<artifact>-<version>.jar`), so
    an image baked for another pyspark/delta-spark pair fails here, not deep inside the first Delta write.
    """
    raw = os.environ.get("CLWL_DELTA_JARS", "").strip()
    if not raw:
        return []
    jars: list[str] = []
    for item in filter(None, (part.strip() for part in raw.split(","))):
        path = Path(item).expanduser().absolute()
        if path.is_dir():
            jars += sorted(str(p) for p in path.glob("*.jar"))
        elif path.is_file():
            jars.append(str(path))
        else:
            raise FileNotFoundError(f"CLWL_DELTA_JARS: {path} does not exist")
    group, artifact, version = delta_packages().split(":")
    if f"{group}_{artifact}-{version}.jar" not in {Path(j).name for j in jars}:
        raise FileNotFoundError(f"CLWL_DELTA_JARS={raw} has no {group}_{artifact}-{version}.jar")
    return jars


def _ivy_dir() -> str | None:
    """Where Ivy keeps its cache and the resolved jars.

    CLWL_IVY_DIR if set; else `.ivy-cache` in the source checkout (git-ignored), so a clone's first start
    never trips over a stale or half-written ~/.ivy2.5.2 left by something else; else Spark's own default.
    """
    env = os.environ.get("CLWL_IVY_DIR", "").strip()
    if env:
        return str(Path(env).expanduser().absolute())
    if (REPO_ROOT / "pyproject.toml").is_file() and os.access(REPO_ROOT, os.W_OK):
        return str(REPO_ROOT / ".ivy-cache")
    return None


def _is_local(master: str) -> bool:
    return master.startswith("local")


def _delta_enabled(session: SparkSession) -> bool:
    conf = session.sparkContext.getConf()
    return DELTA_EXTENSION in (conf.get("spark.sql.extensions") or "") and conf.get(
        "spark.sql.catalog.spark_catalog"
    ) == DELTA_CATALOG


def _apply_runtime_conf(session: SparkSession, conf: dict) -> None:
    for key, value in conf.items():
        value = str(value)
        if session.conf.get(key, None) == value:
            continue
        try:
            session.conf.set(key, value)
        except Exception as exc:  # static/JVM-level settings cannot change on a running session
            log.warning("get_spark: cannot apply %s=%s to the running session (%s)", key, value, exc)


def get_spark(master: str | None = None, app_name: str = "clwl", conf: dict | None = None) -> SparkSession:
    """A Delta-enabled SparkSession; the active one if its master matches and it has Delta, else a new one.

    `master` defaults to PipelineConfig.from_env().master (CLWL_SPARK_MASTER, else local[2]). `conf` entries
    are applied on top of the defaults below (on a reused session, only those Spark can change at run time).
    """
    cfg = PipelineConfig.from_env()
    master = master or cfg.master
    conf = dict(conf or {})

    active = SparkSession.getActiveSession()
    if active is not None:
        if active.sparkContext.master == master and _delta_enabled(active):
            _apply_runtime_conf(active, conf)
            return active
        log.warning(
            "get_spark: stopping the active session (master %s, delta %s) for a Delta session on %s",
            active.sparkContext.master, _delta_enabled(active), master,
        )
        active.stop()

    if _is_local(master):
        # Python workers must run the interpreter (and so the packages) the driver runs; a stale
        # PYSPARK_PYTHON in a developer's shell otherwise gives "Python in worker has different version".
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
        # Loopback for spark-submit's own address lookup too (else a warning when the hostname is loopback).
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    else:
        # On a cluster the workers' interpreter path is theirs to say; only default it.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

    settings: dict[str, str] = {
        # Delta Lake: SQL (MERGE, DESCRIBE HISTORY, time travel) and the catalog that knows Delta tables.
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
        # New tables without deletion vectors: the `deltalake` Python package (no JVM) reads every table.
        "spark.databricks.delta.properties.defaults.enableDeletionVectors": "false",
        # Small data, 2 cores: the default 200 shuffle partitions would be 200 near-empty tasks per shuffle,
        # and Delta's 50 snapshot-state partitions likewise for every table load.
        "spark.sql.shuffle.partitions": str(cfg.shuffle_partitions),
        "spark.databricks.delta.snapshotPartitions": "2",
        # Partitioned writes (every run-date table; silver.message_events also by sender) keep up to this many
        # files open per task instead of first sorting the task's rows by partition: the replay's output is
        # one partition per task, and sorting it cost more than writing it.
        "spark.sql.maxConcurrentOutputFileWriters": "8",
        # Every timestamp in the pipeline is UTC; the host's zone must not leak into results.
        "spark.sql.session.timeZone": "UTC",
        # Arrow for toPandas/createDataFrame(pandas) and the Arrow UDFs (the replay's mapInArrow, history).
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # Batch jobs and tests: no web UI (no port 4040 clashes between parallel runs), no progress bars in logs.
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # Local mode: the driver is the executor, so its memory is the job's memory.
        "spark.driver.memory": os.environ.get("CLWL_SPARK_DRIVER_MEMORY", DEFAULT_DRIVER_MEMORY),
    }
    if _is_local(master):
        # Bind to loopback: a CI container's or laptop's hostname may not resolve to a usable address.
        settings["spark.driver.bindAddress"] = "127.0.0.1"
        settings["spark.driver.host"] = "127.0.0.1"
    secret = os.environ.get("CLWL_SPARK_AUTH_SECRET", "")
    if secret and not _is_local(master):
        # A cluster that requires authentication (docker-compose.yml: spark.authenticate with a shared secret):
        # the secret comes from the environment only, never from a file in the repository.
        settings["spark.authenticate"] = "true"
        settings["spark.authenticate.secret"] = secret
    baked = baked_delta_jars()
    if baked:
        # Containers: jars baked into the image; on the driver's class path and shipped to the executors.
        settings["spark.jars"] = ",".join(baked)
    else:
        settings["spark.jars.excludes"] = ",".join(PROVIDED_BY_PYSPARK)
        ivy = _ivy_dir()
        if ivy:
            settings["spark.jars.ivy"] = ivy
        mirror = os.environ.get("CLWL_MAVEN_REPO", "").strip()
        if mirror:  # an extra repository (a mirror of Maven Central) for the Delta jars
            settings["spark.jars.repositories"] = mirror
    settings.update({k: str(v) for k, v in conf.items()})

    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    if not baked:
        builder = configure_spark_with_delta_pip(builder)
        builder = builder.config("spark.jars.packages", conf.get("spark.jars.packages") or delta_packages())

    for attempt in range(1, _START_ATTEMPTS + 1):
        try:
            session = builder.getOrCreate()
            break
        except PySparkRuntimeError as exc:
            # JAVA_GATEWAY_EXITED: spark-submit died before the JVM came up; on a first start that is almost
            # always the Ivy download (its report is on stderr above). Retry a transient failure.
            if exc.getCondition() != "JAVA_GATEWAY_EXITED" or attempt == _START_ATTEMPTS:
                raise
            log.warning("get_spark: JVM failed to start (attempt %d/%d), retrying", attempt, _START_ATTEMPTS)
            time.sleep(5 * attempt)

    session.sparkContext.setLogLevel("WARN")  # Spark and Delta are chatty at INFO
    return session


def stop_spark() -> None:
    """Stop the active session, if any (the py4j JVM itself lives on for the rest of the process)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
