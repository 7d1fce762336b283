"""The one Delta-enabled SparkSession factory, used by every job and every test.

Every session starts from the Delta JVM jars resolved once into a local folder (spark/jars.py, with the Java
check): `spark.jars`, which the driver also ships to a cluster's executors, so no later start resolves,
downloads or prints anything. With CLWL_SPARK_REMOTE it attaches to a Spark Connect server instead.

The JVM's own output (the Spark banner, log4j lines, JVM warnings) goes to a log file, not the terminal, unless
CLWL_SPARK_VERBOSE=1 (`clwl run --verbose`): see :func:`spark_log_path`.

Importing this module loads no pyspark (the CLI checks Java and the jars before it pays for that import).
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional

from spark.config import PipelineConfig
from spark.jars import SparkStartError, check_java, jar_cache_root, local_delta_jars, local_s3a_jars, verbose

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

# Driver memory for local mode, where the driver is also the only executor. The target machine has 24 GiB and
# 2 cores, shared with Airflow and pytest; 4 GiB is ample for the sample estate and leaves room for the rest.
DEFAULT_DRIVER_MEMORY = "4g"

#: Environment variable: ``off`` starts the JVM without its class archive (see :func:`class_archive_options`).
CLASS_ARCHIVE_ENV = "CLWL_JVM_CLASS_ARCHIVE"
#: A dump of classes is taken as finished once it has not changed for this long (the JVM writes it at its exit,
#: in seconds).
_ARCHIVE_SETTLED_S = 60.0


def class_archive_options(jars: list[str], java: str) -> str:
    """Driver JVM options for a class-data-sharing archive of the classes a run loads.

    A fresh JVM spends tens of seconds loading and verifying Spark's, Delta's and Parquet's classes as each code
    path is first used; mapped from an archive they cost a fraction of that (BENCHMARKS.md, session 7: the
    session's start 14-17 s -> 7-9 s, the samples' run 13% shorter, on a loaded machine). The first JVM without an
    archive dumps the classes it loaded when it exits, to a file of its own; a later start moves the largest
    finished dump into place. The name holds a fingerprint of the JDK and the class path, so another JDK or other
    jars get their own archive. The JVM ignores an archive it cannot use (-Xshare:auto, its messages off), and
    ``CLWL_JVM_CLASS_ARCHIVE=off`` turns this off. "" when off or when the cache folder is not writable."""
    if os.environ.get(CLASS_ARCHIVE_ENV, "").strip().lower() in ("off", "0", "false", "no"):
        return ""
    import pyspark

    try:
        real = os.path.realpath(java)
        parts = [real, str(os.stat(real).st_mtime_ns), pyspark.__version__]
        parts += [f"{j}:{os.stat(j).st_size}" for j in jars]
        key = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
        folder = jar_cache_root() / "jvm-classes"
        folder.mkdir(parents=True, exist_ok=True)
        archive = folder / f"classes-{key}.jsa"
        now = time.time()
        settled = [(d.stat().st_size, d) for d in folder.glob(f"classes-{key}.jsa.*.part")
                   if now - d.stat().st_mtime > _ARCHIVE_SETTLED_S]
        size, largest = max(settled, default=(0, None))
        if size > 0 and not archive.is_file():
            os.replace(largest, archive)  # the largest dump: the JVM that loaded the most classes
        for _, d in settled:
            d.unlink(missing_ok=True)
        for old in folder.glob("classes-*"):  # other JDKs' or jars' archives, unused for a week
            used = max(old.stat().st_atime, old.stat().st_mtime)
            if not old.name.startswith(f"classes-{key}.") and now - used > 7 * 86400:
                old.unlink(missing_ok=True)
    except OSError as exc:
        log.info("no JVM class archive: %s", exc)
        return ""
    quiet = "-XX:+IgnoreUnrecognizedVMOptions -Xlog:cds=off -Xlog:cds+dynamic=off"
    if archive.is_file():
        return f"-XX:SharedArchiveFile={archive} -Xshare:auto {quiet}"
    return f"-XX:ArchiveClassesAtExit={folder / f'classes-{key}.jsa.{os.getpid()}-{time.time_ns()}.part'} {quiet}"


#: A file for the JVM's output instead of the temp folder's: the DAG tasks name one under Airflow's log folder, so
#: that a task's Spark output sits with the task logs instead of piling up in the temp folder, one file a task.
SPARK_LOG_ENV = "CLWL_SPARK_LOG"


def spark_log_path() -> Path:
    """Where the JVM's output goes when not verbose: the file CLWL_SPARK_LOG names (its folder made), else one file
    per Python process in the temp folder."""
    named = os.environ.get(SPARK_LOG_ENV, "").strip()
    if named:
        Path(named).parent.mkdir(parents=True, exist_ok=True)
        return Path(named)
    return Path(tempfile.gettempdir()) / f"clwl-spark-{os.getpid()}.log"


def warehouse_dir() -> Path:
    """spark.sql.warehouse.dir: a temp folder. The pipeline addresses every table by path and never makes a
    managed one, but Spark creates the warehouse folder anyway: not in the caller's current folder."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"clwl-spark-warehouse-{uid}"


@contextmanager
def _stderr_into(path: Optional[Path]) -> Iterator[None]:
    """File descriptor 2 pointed at `path` while the JVM is launched: the child inherits it for its whole life
    (its banner, log4j's console appender, JVM warnings), while this process gets its own stderr back."""
    if path is None:
        yield
        return
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to redirect
        yield
        return
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(target, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


def _last_line(path: Path, offset: int) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            lines = [ln.strip() for ln in fh.read().decode(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def _is_local(master: str) -> bool:
    return master.startswith("local")


def is_remote(session: SparkSession) -> bool:
    """Whether ``session`` is attached to a Spark Connect server (no JVM, no SparkContext in this process)."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def session_master(session: SparkSession) -> str:
    """The master the session's application runs on (a Connect server's own, read through the session)."""
    return session.conf.get("spark.master", "local") if is_remote(session) else session.sparkContext.master


def default_parallelism(session: SparkSession) -> int:
    """SparkContext.defaultParallelism, also for a Connect session: the server's spark.default.parallelism
    (python -m spark.connect_server sets it), else the cores of a local[N] master, else 2."""
    if not is_remote(session):
        return session.sparkContext.defaultParallelism
    raw = session.conf.get("spark.default.parallelism", None)
    if raw and str(raw).isdigit():
        return int(raw)
    master = session_master(session)
    inner = master[master.find("[") + 1:master.find("]")] if "[" in master else ""
    return int(inner) if inner.isdigit() else (os.cpu_count() or 2) if inner == "*" else 2


def _delta_enabled(session: SparkSession) -> bool:
    if is_remote(session):
        get = session.conf.get
        return DELTA_EXTENSION in (get("spark.sql.extensions", "") or "") and get(
            "spark.sql.catalog.spark_catalog", "") == DELTA_CATALOG
    conf = session.sparkContext.getConf()
    return DELTA_EXTENSION in (conf.get("spark.sql.extensions") or "") and conf.get(
        "spark.sql.catalog.spark_catalog"
    ) == DELTA_CATALOG


S3A_FILESYSTEM = "org.apache.hadoop.fs.s3a.S3AFileSystem"
#: The AWS SDK's providers S3A is given: the environment's key (what clwl.lake.storage reads too), else the SDK's own
#: chain (web identity, container endpoint, instance profile), which clwl.lake.storage has already found configured.
ENV_CREDENTIALS = "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider"
CHAIN_CREDENTIALS = "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider"


def object_store_settings(lake: Any, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Spark settings for a lake on an object store ({} for a local lake): the S3A connector serves both
    ``s3://`` (the lake's own URIs, unchanged) and ``s3a://``, with the endpoint, addressing style, region and TLS
    of the environment (clwl.lake.s3_env.s3_settings: StorageError, one line, for missing credentials or a bad
    endpoint). No secret goes into these settings (Spark logs and shows its configuration): S3A reads the key
    from the environment through the SDK's provider, in the driver and in each executor."""
    from clwl.lake.s3_env import s3_settings
    from clwl.lake.storage import is_object_store, lake_root

    location = lake_root(lake) if lake is not None else None
    if not is_object_store(location):
        return {}
    s = s3_settings(env)
    h = "spark.hadoop.fs."
    conf = {
        f"{h}s3.impl": S3A_FILESYSTEM,
        f"{h}s3a.impl": S3A_FILESYSTEM,
        f"{h}AbstractFileSystem.s3.impl": "org.apache.hadoop.fs.s3a.S3A",
        f"{h}AbstractFileSystem.s3a.impl": "org.apache.hadoop.fs.s3a.S3A",
        f"{h}s3a.endpoint.region": s.region,
        f"{h}s3a.path.style.access": str(not s.virtual_hosted).lower(),
        f"{h}s3a.aws.credentials.provider": ENV_CREDENTIALS if s.access_key else CHAIN_CREDENTIALS,
        # A store that is down: a few quick attempts, not the SDK's minutes of retries.
        f"{h}s3a.attempts.maximum": "3",
        f"{h}s3a.retry.limit": "3",
    }
    if s.endpoint:
        conf[f"{h}s3a.endpoint"] = s.endpoint.rstrip("/")
        if s.endpoint.startswith("http://"):  # AWS_ALLOW_HTTP=true was required by s3_settings
            conf[f"{h}s3a.connection.ssl.enabled"] = "false"
    return conf


def _has_s3a(session: SparkSession) -> bool:
    if is_remote(session):
        return session.conf.get("spark.hadoop.fs.s3.impl", None) == S3A_FILESYSTEM
    return session.sparkContext.getConf().get("spark.hadoop.fs.s3.impl") == S3A_FILESYSTEM


def session_settings(shuffle_partitions: int) -> dict[str, str]:
    """The SQL settings every session runs with that a running application can take per session: set on a
    session of our own at its start, and on each session attached to a Connect server."""
    return {
        # New tables without deletion vectors: the `deltalake` Python package (no JVM) reads every table.
        "spark.databricks.delta.properties.defaults.enableDeletionVectors": "false",
        # Small data, 2 cores: the default 200 shuffle partitions would be 200 near-empty tasks per shuffle,
        # and Delta's 50 snapshot-state partitions likewise for every table load.
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.databricks.delta.snapshotPartitions": "2",
        # No adaptive execution: with a handful of shuffle partitions there is little for it to coalesce, and it
        # runs each shuffle's map side as a Spark job of its own, which on small days is most of the cost (the
        # samples' run: 403 jobs with it, 276 without, the same rows; BENCHMARKS.md section 11). The joins that
        # must broadcast say so (F.broadcast), so none waits on adaptive execution to turn into one.
        "spark.sql.adaptive.enabled": "false",
        # Partitioned writes (every run-date table; silver.message_events also by sender) keep up to this many
        # files open per task instead of first sorting the task's rows by partition: the replay's output is
        # one partition per task, and sorting it cost more than writing it.
        "spark.sql.maxConcurrentOutputFileWriters": "8",
        # Every timestamp in the pipeline is UTC; the host's zone must not leak into results.
        "spark.sql.session.timeZone": "UTC",
        # Arrow for toPandas/createDataFrame(pandas) and the Arrow UDFs (the replay's mapInArrow, history).
        "spark.sql.execution.arrow.pyspark.enabled": "true",
    }


def _connect_address(url: str) -> tuple[str, int]:
    """(host, port) of ``sc://host:port[/;params]`` (Spark Connect's default port 15002 when none)."""
    rest = url[len("sc://"):].split("/", 1)[0].split(";", 1)[0]
    host, _, port = rest.rpartition(":") if ":" in rest else (rest, "", "15002")
    if not host or not port.isdigit():
        raise SparkStartError(f"CLWL_SPARK_REMOTE={url}: not a Spark Connect URL sc://host:port")
    return host.strip("[]"), int(port)


def remote_spark(url: str, conf: dict | None = None, shuffle_partitions: int = 4) -> SparkSession:
    """A session attached to the Spark Connect server at ``url`` (no JVM in this process): SparkStartError (one
    line) when nothing listens there or the server has no Delta Lake. The per-session settings
    (:func:`session_settings`, then ``conf``) are applied; the rest (the Delta jars and extension, memory, the
    master) are the server's, as ``python -m spark.connect_server`` starts it. The pipeline's code is shipped to
    the session (its Python workers run the client's clwl and spark packages)."""
    import socket

    from pyspark.sql import SparkSession

    host, port = _connect_address(url)
    try:  # fail in a second, not after the client's minutes of retries
        socket.create_connection((host, port), timeout=5).close()
    except OSError as exc:
        raise SparkStartError(f"no Spark Connect server at {url} ({exc.strerror or exc}); start one with "
                              f"`python -m spark.connect_server --port {port}` or unset CLWL_SPARK_REMOTE") from None
    session = SparkSession.builder.remote(url).getOrCreate()
    if not _delta_enabled(session):
        raise SparkStartError(f"the Spark Connect server at {url} has no Delta Lake extension ({DELTA_EXTENSION}); "
                              "start it with `python -m spark.connect_server`")
    _apply_runtime_conf(session, {**session_settings(shuffle_partitions), **{k: str(v) for k, v in
                                                                           (conf or {}).items()}})
    if not getattr(session, "_clwl_code_shipped", False):
        session.addArtifacts(str(code_zip()), pyfile=True)
        session._clwl_code_shipped = True
    return session


def code_zip() -> Path:
    """The clwl and spark packages as a zip at their import paths (`clwl/...`, `spark/...`), in a new temp file:
    what a cluster's executors (SparkContext.addPyFile) or a Connect session's Python workers (addArtifacts)
    import the pipeline's task code from, so they run the driver's code, not whatever is installed there."""
    import zipfile

    import clwl

    roots = [Path(clwl.__file__).parent, Path(__file__).parent]  # clwl/ and spark/ (this is spark/session.py)
    fd, name = tempfile.mkstemp(prefix="clwl-code-", suffix=".zip")
    os.close(fd)
    # Removed when the driver ends (a cluster's executors may fetch it until then): a zip a session, not a pile.
    atexit.register(lambda: Path(name).unlink(missing_ok=True))
    with zipfile.ZipFile(name, "w", zipfile.ZIP_DEFLATED) as z:
        for root in roots:
            for p in root.rglob("*.py"):
                z.write(p, p.relative_to(root.parent).as_posix())
    return Path(name)


def _apply_runtime_conf(session: SparkSession, conf: dict) -> None:
    for key, value in conf.items():
        value = str(value)
        if session.conf.get(key, None) == value:
            continue
        try:
            session.conf.set(key, value)
        except Exception as exc:  # static/JVM-level settings cannot change on a running session
            log.warning("get_spark: cannot apply %s=%s to the running session (%s)", key, value, exc)


def get_spark(master: str | None = None, app_name: str = "clwl", conf: dict | None = None,
              shown_output: bool | None = None, remote: str | None = None, lake: Any = None) -> SparkSession:
    """A Delta-enabled SparkSession; the active one if its master matches and it has Delta, else a new one.

    `master` defaults to PipelineConfig.from_env().master (CLWL_SPARK_MASTER, else local[2]). `conf` entries
    are applied on top of the defaults below (on a reused session, only those Spark can change at run time).
    `remote` (default PipelineConfig.from_env().remote, CLWL_SPARK_REMOTE): a Spark Connect server's URL; then
    the session is attached to it (:func:`remote_spark`) and `master` is the server's business.
    `lake` (default PipelineConfig.from_env().lake, CLWL_LAKE): on an object store, the session also gets the S3A
    connector (its jars, fetched once, and :func:`object_store_settings`); a local lake needs none of that.
    SparkStartError (one line) when Spark cannot start: no Java, the Delta jars cannot be fetched, the JVM exits.
    """
    from pyspark.errors import PySparkRuntimeError
    from pyspark.sql import SparkSession

    cfg = PipelineConfig.from_env()
    remote = remote or cfg.remote
    store = object_store_settings(cfg.lake if lake is None else lake)
    if remote:
        session = remote_spark(remote, conf, cfg.shuffle_partitions)
        if store and not _has_s3a(session):  # its S3A is the server's, set when it started (spark.connect_server)
            raise SparkStartError(f"the Spark Connect server at {remote} has no S3A connector for the lake on the "
                                  "object store; start it with that CLWL_LAKE and the AWS_* variables in its "
                                  "environment")
        return session
    master = master or cfg.master
    conf = dict(conf or {})

    active = SparkSession.getActiveSession()
    if active is not None:
        if active.sparkContext.master == master and _delta_enabled(active) and (not store or _has_s3a(active)):
            _apply_runtime_conf(active, conf)
            return active
        log.warning(
            "get_spark: stopping the active session (master %s, delta %s, s3a %s) for a Delta session on %s",
            active.sparkContext.master, _delta_enabled(active), _has_s3a(active), master,
        )
        active.stop()

    java = check_java()
    jars = local_delta_jars() + (local_s3a_jars(shown_output=shown_output) if store else [])

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
        # The Delta jars as local files: on the driver's class path, and shipped by the driver to a cluster's
        # executors. No spark.jars.packages, so no Ivy resolution (nor its report) at start.
        "spark.jars": ",".join(jars),
        # Not ./spark-warehouse: every table is addressed by path, yet Spark makes the folder.
        "spark.sql.warehouse.dir": str(warehouse_dir()),
        **session_settings(cfg.shuffle_partitions),
        # Batch jobs and tests: no web UI (no port 4040 clashes between parallel runs), no progress bars in logs.
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # Local mode: the driver is the executor, so its memory is the job's memory.
        "spark.driver.memory": os.environ.get("CLWL_SPARK_DRIVER_MEMORY", DEFAULT_DRIVER_MEMORY),
    }
    archive = class_archive_options(jars, java)
    if archive:  # the driver's JVM only (in local mode also the executor); a cluster's executors are their own
        settings["spark.driver.extraJavaOptions"] = archive
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
    settings.update(store)
    settings.update({k: str(v) for k, v in conf.items()})

    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)

    jvm_log = None if verbose(shown_output) else spark_log_path()
    offset = jvm_log.stat().st_size if jvm_log is not None and jvm_log.exists() else 0
    try:
        with _stderr_into(jvm_log):
            session = builder.getOrCreate()
    except PySparkRuntimeError as exc:
        if exc.getCondition() != "JAVA_GATEWAY_EXITED":
            raise
        # spark-submit died before the JVM came up (a bad JVM option, too little memory, ...): its last words.
        last = _last_line(jvm_log, offset) if jvm_log is not None else ""
        where = f"; Spark's output is in {jvm_log}" if jvm_log is not None else ""
        raise SparkStartError(f"Spark did not start: the JVM exited{': ' + last if last else ''}{where}") from None
    if jvm_log is not None:
        log.info("get_spark: Spark's own output (banner, log4j) goes to %s", jvm_log)

    session.sparkContext.setLogLevel("WARN")  # Spark and Delta are chatty at INFO
    return session


def stop_spark() -> None:
    """Stop the active session, if any (the py4j JVM itself lives on for the rest of the process)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
