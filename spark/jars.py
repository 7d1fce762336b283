"""The Delta Lake jars, the S3A connector's jars and Java, for the one session factory (spark/session.py): Java
found (or one line saying it is missing), and the JVM jars resolved once, from Maven Central through Spark's own
Ivy resolution (`spark-submit --packages`, in a subprocess whose output is shown only with CLWL_SPARK_VERBOSE=1),
into a local folder (:func:`local_jar_folder`) every later session starts from. Images bake the jars in instead
(CLWL_DELTA_JARS, docker/bake-delta-jars.sh; CLWL_S3A_JARS). The S3A jars (:func:`local_s3a_jars`) are fetched
only for a lake on an object store: a local lake never needs them. Loads no pyspark."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

from spark.config import REPO_ROOT

log = logging.getLogger(__name__)

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

# The S3A connector (hadoop-aws) must be the version of the Hadoop client pyspark ships, and it is built against one
# AWS SDK v2 release. hadoop-aws declares the SDK's 612 MiB `bundle` jar; S3A uses a few of its modules (about
# 12 MB with their dependencies), so the bundle is excluded and these are resolved instead, at the version that
# Hadoop release declares. A Hadoop version missing here is a one-line refusal (add its SDK version).
AWS_SDK_FOR_HADOOP = {"3.4.1": "2.24.6", "3.4.2": "2.29.52"}
#: The SDK modules S3A loads: the S3 client (sync, Apache HTTP), the transfer manager with its async (Netty)
#: client for copies and uploads, and STS for assumed-role credentials.
S3A_SDK_MODULES = ("s3", "s3-transfer-manager", "apache-client", "netty-nio-client", "sts")
#: What hadoop-aws and the SDK modules depend on that pyspark already ships (pyspark/jars; its copies win anyway).
S3A_PROVIDED_BY_PYSPARK = (
    "software.amazon.awssdk:bundle",
    "org.apache.hadoop:hadoop-common",
    "org.apache.hadoop:hadoop-client-api",
    "org.apache.hadoop:hadoop-client-runtime",
    "org.slf4j:slf4j-api",
    "commons-codec:commons-codec",
    "org.apache.httpcomponents:httpclient",
    "org.apache.httpcomponents:httpcore",
    *(f"io.netty:netty-{m}" for m in ("buffer", "codec", "codec-http", "codec-http2", "common", "handler",
                                      "resolver", "transport", "transport-classes-epoll",
                                      "transport-native-unix-common")),
)

_RESOLVE_ATTEMPTS = 3  # the one download from Maven Central; ride out a transient network failure
_JAR_LIST = "jars.txt"  # in a local jar folder, written last: the folder is complete when it is there


class SparkStartError(RuntimeError):
    """Spark cannot start here (no Java, the Delta jars cannot be fetched, the JVM exited): one line for stderr."""


class JavaNotFoundError(SparkStartError):
    """Neither JAVA_HOME/bin/java nor a java on PATH: Spark's launcher would fail, after a long wait."""


def verbose(flag: bool | None = None) -> bool:
    """Ivy's report and the JVM's output on the terminal: ``flag`` (PipelineConfig.verbose, `clwl run --verbose`)
    when given, else CLWL_SPARK_VERBOSE=1."""
    if flag is not None:
        return flag
    return os.environ.get("CLWL_SPARK_VERBOSE", "").strip().lower() in ("1", "true", "yes")


def java_executable() -> Optional[str]:
    """The java Spark's launcher (bin/spark-class) would run: $JAVA_HOME/bin/java when JAVA_HOME is set (even
    when it does not exist), else the first java on PATH; None when there is none."""
    home = os.environ.get("JAVA_HOME", "")
    if home:
        java = Path(home) / "bin" / "java"
        return str(java) if java.is_file() and os.access(java, os.X_OK) else None
    return shutil.which("java")


def check_java() -> str:
    """The java executable, or JavaNotFoundError naming what is missing."""
    java = java_executable()
    if java is None:
        home = os.environ.get("JAVA_HOME", "")
        where = f"JAVA_HOME={home} has no bin/java" if home else "no java on PATH and JAVA_HOME is not set"
        raise JavaNotFoundError(f"Spark needs Java: {where}; install a JDK 17 or set JAVA_HOME")
    return java


def delta_packages() -> str:
    """The Maven coordinate of the Delta jar that goes with the installed pyspark and delta-spark, as
    configure_spark_with_delta_pip picks it: for pyspark 4.1.3 + delta-spark 4.4.0,
    `io.delta:delta-spark_4.1_2.13:4.4.0`.

    delta-spark is pinned to 4.4.0, not 4.4.1: 4.4.1 was published to PyPI only, and Maven Central has no
    `delta-spark_4.1_2.13:4.4.1`, so Ivy fails with "not found".
    """
    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    return configure_spark_with_delta_pip(SparkSession.Builder())._options["spark.jars.packages"]


def _main_jar_name(coordinate: str) -> str:
    group, artifact, version = coordinate.split(":")
    return f"{group}_{artifact}-{version}.jar"  # how Ivy names a retrieved jar


def _baked_jars(variable: str, coordinate: str, error: type[Exception]) -> list[str]:
    """The jars an image baked (a folder of jars, or a comma-separated list of jar files) named by the environment
    variable ``variable``; empty when it is unset. It must hold the very jar ``coordinate`` names (Ivy's
    `<group>_<artifact>-<version>.jar`), so an image baked for another pyspark release fails here, not deep inside
    the first write. ``error`` when a path is missing or that jar is not there."""
    raw = os.environ.get(variable, "").strip()
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
            raise error(f"{variable}: {path} does not exist")
    main_jar = _main_jar_name(coordinate)
    if main_jar not in {Path(j).name for j in jars}:
        raise error(f"{variable}={raw} has no {main_jar}")
    return jars


def baked_delta_jars() -> list[str]:
    """The Delta jars resolved at image build time (docker/bake-delta-jars.sh), from CLWL_DELTA_JARS. Empty when
    unset: then :func:`local_delta_jars`."""
    return _baked_jars("CLWL_DELTA_JARS", delta_packages(), FileNotFoundError)


def jar_cache_root() -> Path:
    """Where the Delta jars (and Ivy's download cache) are kept.

    CLWL_IVY_DIR if set; else `.ivy-cache` in the source checkout (git-ignored; `make distclean` removes it);
    else, for an installed package, `$XDG_CACHE_HOME/clwl-analytics` (default `~/.cache/clwl-analytics`).
    """
    env = os.environ.get("CLWL_IVY_DIR", "").strip()
    if env:
        return Path(env).expanduser().absolute()
    if (REPO_ROOT / "pyproject.toml").is_file() and os.access(REPO_ROOT, os.W_OK):
        return REPO_ROOT / ".ivy-cache"
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(cache).expanduser().absolute() / "clwl-analytics"


def local_jar_folder(coordinate: Optional[str] = None, kind: str = "delta-jars",
                     extra: tuple[str, ...] = (), exclusions: tuple[str, ...] = PROVIDED_BY_PYSPARK) -> Path:
    """The folder of local jars for this pyspark/delta-spark pair: `<root>/<kind>/<artifact>-<version>-<hash>`,
    the hash over the coordinates (``coordinate``, then ``extra``) and the exclusions (a change of any resolves
    afresh)."""
    coordinate = coordinate or delta_packages()
    _, artifact, version = coordinate.split(":")
    digest = hashlib.sha256("\n".join((coordinate, *extra, *exclusions)).encode()).hexdigest()[:10]
    return jar_cache_root() / kind / f"{artifact}-{version}-{digest}"


def _listed_jars(folder: Path) -> list[str]:
    """The jars of a complete local jar folder (its list written last, each file present), else []."""
    listing = folder / _JAR_LIST
    if not listing.is_file():
        return []
    jars = [folder / name for name in listing.read_text().split()]
    return [str(j) for j in jars] if jars and all(j.is_file() for j in jars) else []


def local_delta_jars(progress: Optional[Callable[[str], None]] = None, shown_output: bool | None = None) -> list[str]:
    """The Delta jars as local files, the main jar first: CLWL_DELTA_JARS's, else the local jar folder's, resolved
    into it now if it is not complete (a one-off download; `progress` gets one line first). SparkStartError when
    the resolution fails."""
    coordinate = delta_packages()
    return baked_delta_jars() or _resolved_jars([coordinate], "delta-jars", PROVIDED_BY_PYSPARK,
                                                f"the Delta Lake jars ({coordinate})", "the Delta Lake jars",
                                                progress, shown_output)


def _resolved_jars(packages: list[str], kind: str, exclusions: tuple[str, ...], fetching: str, what: str,
                   progress: Optional[Callable[[str], None]], shown_output: bool | None) -> list[str]:
    """The jars of ``packages`` (the main one first) in their local jar folder (:func:`local_jar_folder`, under
    ``kind``), resolved into it now when it is not complete: one line (``fetching`` names them) to the log and to
    ``progress`` first. SparkStartError when the resolution fails or leaves the folder incomplete."""
    folder = local_jar_folder(packages[0], kind, tuple(packages[1:]), exclusions)
    jars = _listed_jars(folder)
    if jars:
        return jars
    mirror = os.environ.get("CLWL_MAVEN_REPO", "").strip()
    line = (f"fetching {fetching} from {mirror or 'Maven Central'} into {folder}; "
            "once only, later runs start from them")
    log.info("%s", line)
    if progress is not None:
        progress(line)
    _resolve_into(packages[0], folder, mirror, verbose(shown_output), tuple(packages[1:]), exclusions, what=what)
    jars = _listed_jars(folder)
    if not jars:
        raise SparkStartError(f"{what} resolved into {folder} are incomplete; remove it and run again")
    return jars


def pyspark_hadoop_version() -> str:
    """The Hadoop client version pyspark ships (the `hadoop-client-api-<version>.jar` in pyspark/jars)."""
    import pyspark

    found = sorted(Path(pyspark.__file__).parent.joinpath("jars").glob("hadoop-client-api-*.jar"))
    if not found:
        raise SparkStartError("pyspark ships no hadoop-client-api jar: cannot tell which hadoop-aws matches it")
    return found[-1].name.removeprefix("hadoop-client-api-").removesuffix(".jar")


def s3a_packages(hadoop_version: Optional[str] = None) -> list[str]:
    """The Maven coordinates of the S3A connector for pyspark's Hadoop: hadoop-aws first, then the AWS SDK
    modules it uses at the SDK version that Hadoop release declares (never the SDK bundle). For pyspark 4.1.3
    (Hadoop 3.4.2): `org.apache.hadoop:hadoop-aws:3.4.2` and `software.amazon.awssdk:<module>:2.29.52`."""
    hadoop = hadoop_version or pyspark_hadoop_version()
    sdk = AWS_SDK_FOR_HADOOP.get(hadoop)
    if sdk is None:
        raise SparkStartError(f"no AWS SDK version known for Hadoop {hadoop} (pyspark's): add it to "
                              f"spark/jars.py AWS_SDK_FOR_HADOOP from hadoop-project's aws-java-sdk-v2.version")
    return [f"org.apache.hadoop:hadoop-aws:{hadoop}", *(f"software.amazon.awssdk:{m}:{sdk}" for m in S3A_SDK_MODULES)]


def local_s3a_jars(progress: Optional[Callable[[str], None]] = None, shown_output: bool | None = None) -> list[str]:
    """The S3A connector's jars as local files, hadoop-aws first: CLWL_S3A_JARS's (a folder or a comma-separated
    list, baked into an image), else the local jar folder's (`<root>/s3a-jars/...`), resolved into it now if it
    is not complete (once; `progress` gets one line first). Asked for only when the lake is on an object store.
    SparkStartError when the resolution fails."""
    packages = s3a_packages()
    return _baked_jars("CLWL_S3A_JARS", packages[0], SparkStartError) or _resolved_jars(
        packages, "s3a-jars", S3A_PROVIDED_BY_PYSPARK,
        f"the S3A connector's jars ({packages[0]} and {len(packages) - 1} AWS SDK modules)",
        "the S3A connector's jars", progress, shown_output)


def _resolve_into(coordinate: str, folder: Path, mirror: str, shown: bool = False, extra: tuple[str, ...] = (),
                  exclusions: tuple[str, ...] = PROVIDED_BY_PYSPARK, what: str = "the Delta Lake jars") -> None:
    """Resolve `coordinate` (and `extra`, without `exclusions`) with Spark's Ivy (`spark-submit --packages`
    running an empty Python app) into a fresh staging folder, then move the jars to `folder` in one rename, their
    list written last (the main jar, `coordinate`'s, first).

    The staging Ivy home shares the download cache `<root>/cache` (a link), so only the retrieved jars are
    fresh: exactly this resolution's jars, none left over from another version's.
    """
    import pyspark

    check_java()
    root = folder.parent.parent
    root.mkdir(parents=True, exist_ok=True)
    (root / "cache").mkdir(exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".resolving-", dir=root))
    try:
        ivy = staging / "ivy"
        ivy.mkdir()
        try:
            os.symlink(root / "cache", ivy / "cache", target_is_directory=True)
        except OSError:  # no links here: download into the staging cache instead
            pass
        app = staging / "noop.py"
        app.write_text("pass\n")  # spark-submit resolves --packages before it starts the app
        submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
        command = [str(submit), "--master", "local[1]", "--packages", ",".join((coordinate, *extra)),
                   "--exclude-packages", ",".join(exclusions), "--conf", f"spark.jars.ivy={ivy}",
                   "--conf", "spark.ui.enabled=false"]
        if mirror:
            command += ["--repositories", mirror]
        command.append(str(app))
        env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
        env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        retrieved = ivy / "jars"
        for attempt in range(1, _RESOLVE_ATTEMPTS + 1):
            done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, text=True,
                                  stdout=None if shown else subprocess.PIPE,
                                  stderr=None if shown else subprocess.STDOUT)
            if done.returncode == 0 and (retrieved / _main_jar_name(coordinate)).is_file():
                break
            output = [ln.strip() for ln in (done.stdout or "").splitlines() if ln.strip()]
            reason = next((ln for ln in reversed(output) if "not found" in ln or "Exception" in ln or
                           "rror" in ln), output[-1] if output else f"spark-submit exited {done.returncode}")
            if attempt == _RESOLVE_ATTEMPTS:
                raise SparkStartError(
                    f"cannot fetch {what} {coordinate} from {mirror or 'Maven Central'} "
                    f"({reason}); set CLWL_MAVEN_REPO to a reachable mirror, or --verbose to see the resolution")
            log.warning("resolving %s failed (attempt %d/%d): %s; retrying", coordinate, attempt,
                        _RESOLVE_ATTEMPTS, reason)
            time.sleep(5 * attempt)
        names = sorted(p.name for p in retrieved.glob("*.jar"))
        main_jar = _main_jar_name(coordinate)
        names.remove(main_jar)
        (retrieved / _JAR_LIST).write_text("\n".join([main_jar, *names]) + "\n")
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(retrieved, folder)
        except OSError:
            if not _listed_jars(folder):  # a half-made folder (not a concurrent run's finished one): replace it
                shutil.rmtree(folder, ignore_errors=True)
                os.rename(retrieved, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # removes the cache link, not the cache
