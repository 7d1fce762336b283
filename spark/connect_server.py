"""One long-lived Spark application for a night's runs: a Spark Connect server that `clwl run`, `clwl ingest` and
every Airflow task attach to (CLWL_SPARK_REMOTE / the Airflow Variable `clwl_spark_remote`, `sc://host:port`)
instead of each starting a JVM of its own.

    python -m spark.connect_server --port 15002            # in the foreground; stop it with Ctrl-C / SIGTERM
    CLWL_SPARK_REMOTE=sc://localhost:15002 clwl run ...

It is pyspark's own `spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer` (the Connect
jar ships with pyspark) with what :func:`spark.session.get_spark` gives a session of its own: the Delta jars
(:func:`spark.jars.local_delta_jars`, resolved once), the Delta SQL extension and catalog, the warehouse in the
temp folder, no UI, the driver's memory. It listens on 127.0.0.1 unless told otherwise: whoever reaches the port
runs code as this user. With SPARK_CONNECT_AUTHENTICATE_TOKEN set (in the server's and the clients' environment)
the server requires that token; the client sends it without TLS only to `sc://localhost:<port>`.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from clwl.lake.storage import StorageError
from spark.config import PipelineConfig
from spark.jars import SparkStartError, check_java, local_delta_jars, local_s3a_jars
from spark.session import (
    DEFAULT_DRIVER_MEMORY,
    DELTA_CATALOG,
    DELTA_EXTENSION,
    object_store_settings,
    session_settings,
    warehouse_dir,
)

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DEFAULT_PORT = 15002
DEFAULT_HOST = "127.0.0.1"


def _local_cores(master: str) -> int | None:
    """The task slots of a local master (local[N], local[*]: this machine's cores, local: 1); None for a
    cluster's (Spark counts its executors' cores itself)."""
    if not master.startswith("local"):
        return None
    inner = master[master.find("[") + 1:master.find("]")] if "[" in master else "1"
    return int(inner) if inner.isdigit() else os.cpu_count() or 2


def server_command(port: int = DEFAULT_PORT, host: str = DEFAULT_HOST, master: str | None = None,
                   driver_memory: str | None = None, jars: list[str] | None = None) -> list[str]:
    """The spark-submit command line that runs the Connect server (nothing is started)."""
    import pyspark

    config = PipelineConfig.from_env()
    master = master or config.master
    # A lake on an object store (CLWL_LAKE=s3://...): the S3A jars and settings get_spark gives a session of its
    # own; the key stays in the environment (S3A's provider reads it in the driver and in each executor).
    store = object_store_settings(config.lake)
    jars = jars if jars is not None else local_delta_jars() + (local_s3a_jars() if store else [])
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    conf = {
        "spark.connect.grpc.binding.address": host,
        "spark.connect.grpc.binding.port": str(port),
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
        "spark.sql.warehouse.dir": str(warehouse_dir()),
        # Defaults for every attached session (each client sets them again on its session: spark/session.py).
        **session_settings(config.shuffle_partitions),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.log.level": "WARN",
        "spark.driver.memory": driver_memory or os.environ.get("CLWL_SPARK_DRIVER_MEMORY", DEFAULT_DRIVER_MEMORY),
        **store,
    }
    cores = _local_cores(master)
    if cores is not None:
        # What spark.session.default_parallelism reads through a session: the parse plans this many tasks at least.
        conf["spark.default.parallelism"] = str(cores)
        conf["spark.driver.bindAddress"] = "127.0.0.1"
        conf["spark.driver.host"] = "127.0.0.1"
    command = [str(submit), "--master", master, "--name", "clwl-connect", "--class", SERVER_CLASS]
    secret = os.environ.get("CLWL_SPARK_AUTH_SECRET", "")
    if secret and cores is None:
        # A cluster that requires authentication (docker-compose.yml): the secret in a file only this user reads,
        # not on the command line, where any process listing would show it.
        command += ["--properties-file", str(_secret_properties(secret))]
    if jars:
        command += ["--jars", ",".join(jars)]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    return command + ["spark-internal"]


def _secret_properties(secret: str) -> Path:
    """A Spark properties file (mode 0600) with spark.authenticate and the shared secret."""
    import tempfile

    fd, name = tempfile.mkstemp(prefix="clwl-connect-", suffix=".properties")
    with os.fdopen(fd, "w") as fh:  # mkstemp made it 0600
        fh.write(f"spark.authenticate true\nspark.authenticate.secret {secret}\n")
    return Path(name)


def server_env() -> dict[str, str]:
    """The server's environment: its Python workers run this interpreter (and so this project's packages)."""
    env = {**os.environ, "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON") or sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable}
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return env


def listening(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
        return True
    except OSError:
        return False


def start_server(port: int = DEFAULT_PORT, host: str = DEFAULT_HOST, master: str | None = None,
                 log_path: Path | None = None, timeout: float = 180.0, **popen) -> subprocess.Popen:
    """Start the server in the background (its own process group, its output to ``log_path``) and wait until
    it listens: the process, whose pid stops it. SparkStartError naming the log's last line when it exits or
    does not listen within ``timeout`` seconds."""
    check_java()
    command = server_command(port, host, master)
    out = open(log_path, "ab") if log_path is not None else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(command, env=server_env(), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True, **popen)
    finally:
        if log_path is not None:
            out.close()
    deadline = time.monotonic() + timeout
    probe = "127.0.0.1" if host in ("0.0.0.0", "") else host
    while not listening(probe, port):
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
            last = ""
            if log_path is not None and log_path.exists():
                lines = [ln for ln in log_path.read_text(errors="replace").splitlines() if ln.strip()]
                last = lines[-1].strip() if lines else ""
            raise SparkStartError(f"the Spark Connect server did not come up on {host}:{port}"
                                  f"{': ' + last if last else ''}")
        time.sleep(0.5)
    return proc


def stop_server(proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Stop a server :func:`start_server` started: SIGTERM to its process group (spark-submit and its JVM), SIGKILL
    if it has not exited within ``timeout`` seconds."""
    import signal

    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=timeout)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spark.connect_server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"gRPC port (default {DEFAULT_PORT})")
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"address to listen on (default {DEFAULT_HOST}; 0.0.0.0 only inside a private network)")
    parser.add_argument("--master", default=None, help="the application's master (default CLWL_SPARK_MASTER, "
                                                       "else local[2])")
    parser.add_argument("--driver-memory", default=None, help=f"default CLWL_SPARK_DRIVER_MEMORY, else "
                                                              f"{DEFAULT_DRIVER_MEMORY}")
    args = parser.parse_args(argv)
    try:
        check_java()
        command = server_command(args.port, args.host, args.master, args.driver_memory)
    except (SparkStartError, FileNotFoundError, StorageError) as exc:
        print(f"spark.connect_server: {exc}", file=sys.stderr)
        return 2
    print(f"Spark Connect server on {args.host}:{args.port}: CLWL_SPARK_REMOTE=sc://"
          f"{'localhost' if args.host in ('127.0.0.1', 'localhost') else args.host}:{args.port}", flush=True)
    os.execve(command[0], command, server_env())  # the server in this process: signals reach the JVM directly


if __name__ == "__main__":
    sys.exit(main())
