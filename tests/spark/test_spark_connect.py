"""One warm Spark for many runs: `python -m spark.connect_server` on a free loopback port, `clwl run` on the samples
attached to it (CLWL_SPARK_REMOTE), and the published tables equal those of the embedded local-mode run (the
session's shared ``samples_lake``). The client starts no JVM of its own: the parse (spark.range + mapInArrow over
the parse tasks), the replay (the same over the senders), Delta writes, the quality gate and the publish all run
in the server's application, through DataFrame functions and SQL that Spark Connect carries.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LANDING = ROOT / "samples" / "landing"
COMPARED = {
    "routing_replay": ["msg_id"],
    "stuck_messages": ["msg_id"],
    "distribution": ["sending_qmgr", "queue", "interval_start", "qmgr", "source"],
}



def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def connect_server(tmp_path):
    """A Spark Connect server with the Delta jars on 127.0.0.1 (its own process group, stopped by its id); the
    URL a client sets as CLWL_SPARK_REMOTE."""
    from spark.connect_server import start_server, stop_server

    port = _free_port()
    proc = start_server(port, log_path=tmp_path / "connect.log")
    try:
        yield f"sc://localhost:{port}", proc
    finally:
        stop_server(proc)


def _gold(lake: Path, table: str, keys: list[str]):
    from clwl.lake.door import Lake

    df = Lake(lake).rows(f"gold.{table}").to_pandas()
    return df.sort_values(["run_date", *keys]).reset_index(drop=True)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.extended
def test_clwl_run_attached_to_a_connect_server_equals_local_mode(connect_server, samples_lake, tmp_path):
    url, server = connect_server
    lake = tmp_path / "lake-connect"
    run = subprocess.Popen([sys.executable, "-m", "clwl.cli", "run", "--landing", str(LANDING), "--lake", str(lake)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env={**os.environ, "CLWL_SPARK_REMOTE": url})
    out, _ = run.communicate(timeout=1800)
    assert run.returncode == 0, out[-4000:]
    # No JVM in the client: get_spark sends a JVM's output to clwl-spark-<pid>.log when it starts one.
    assert not (Path(tempfile.gettempdir()) / f"clwl-spark-{run.pid}.log").exists()
    assert server.poll() is None  # the server outlives the run, for the next one
    for table, keys in COMPARED.items():
        a, b = _gold(lake, table, keys), _gold(samples_lake.lake, table, keys)
        assert len(a) > 0 or table == "stuck_messages"
        assert a.equals(b), f"{table} differs between the Connect server and local mode"
    # This server was started for a local lake: a client whose lake is on an object store is refused in one line
    # at attach, not with a "No FileSystem for scheme" in its first write.
    store_env = {"CLWL_SPARK_REMOTE": url, "CLWL_LAKE": "s3://clwl-test/lake", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
                 "AWS_SECRET_ACCESS_KEY": "not-a-real-secret", "AWS_REGION": "us-east-1"}
    code = ("from spark.session import get_spark, SparkStartError\n"
            "try:\n    get_spark()\nexcept SparkStartError as e:\n    print('REFUSED', e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **store_env})
    assert done.stdout.startswith("REFUSED the Spark Connect server at " + url + " has no S3A connector"), (
        done.stdout, done.stderr[-2000:])


def test_no_server_at_the_remote_url_is_one_line(tmp_path):
    """Nothing listens at CLWL_SPARK_REMOTE: get_spark refuses at once with one line naming the URL and how to
    start a server (no minutes of client retries)."""
    code = ("from spark.session import get_spark, SparkStartError\n"
            "try:\n    get_spark()\nexcept SparkStartError as e:\n    print('REFUSED', e)\n")
    url = f"sc://localhost:{_free_port()}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "CLWL_SPARK_REMOTE": url})
    [line] = [ln for ln in done.stdout.splitlines() if ln.startswith("REFUSED")]
    assert f"no Spark Connect server at {url}" in line and "python -m spark.connect_server" in line


def test_the_remote_comes_from_clwl_spark_remote_and_must_be_a_connect_url(monkeypatch):
    from spark.config import PipelineConfig

    monkeypatch.setenv("CLWL_SPARK_REMOTE", "sc://localhost:15002")
    assert PipelineConfig.from_env().remote == "sc://localhost:15002"
    monkeypatch.setenv("CLWL_SPARK_REMOTE", "")
    assert PipelineConfig.from_env().remote is None  # empty = unset: a session of its own
    with pytest.raises(ValueError, match="sc://host:port"):
        PipelineConfig(remote="spark://cluster:7077")


def test_connect_address_of_a_url():
    from spark.session import SparkStartError, _connect_address

    assert _connect_address("sc://localhost:15002") == ("localhost", 15002)
    assert _connect_address("sc://spark-connect:16000/;token=x") == ("spark-connect", 16000)
    assert _connect_address("sc://127.0.0.1") == ("127.0.0.1", 15002)  # Spark Connect's default port
    with pytest.raises(SparkStartError, match="not a Spark Connect URL"):
        _connect_address("sc://:x")


def test_the_server_command_runs_connect_with_delta_on_loopback():
    """What `python -m spark.connect_server` runs: pyspark's spark-submit with the Connect server class, the given
    jars, Delta's extension and catalog, loopback binding on the port, the default parallelism of local[N] (which
    spark.session.default_parallelism reads back through a session), and spark-internal as the resource."""
    from spark.connect_server import SERVER_CLASS, server_command
    from spark.session import DELTA_CATALOG, DELTA_EXTENSION

    cmd = server_command(16001, master="local[3]", jars=["/x/delta.jar", "/x/storage.jar"])
    assert cmd[0].endswith("bin/spark-submit") and cmd[-1] == "spark-internal"
    assert cmd[cmd.index("--class") + 1] == SERVER_CLASS
    assert cmd[cmd.index("--master") + 1] == "local[3]"
    assert cmd[cmd.index("--jars") + 1] == "/x/delta.jar,/x/storage.jar"
    conf = dict(cmd[i + 1].split("=", 1) for i, word in enumerate(cmd) if word == "--conf")
    assert conf["spark.connect.grpc.binding.address"] == "127.0.0.1"
    assert conf["spark.connect.grpc.binding.port"] == "16001"
    assert conf["spark.sql.extensions"] == DELTA_EXTENSION
    assert conf["spark.sql.catalog.spark_catalog"] == DELTA_CATALOG
    assert conf["spark.default.parallelism"] == "3"
    assert conf["spark.sql.session.timeZone"] == "UTC"
    cluster = server_command(16001, host="0.0.0.0", master="spark://m:7077", jars=[])
    conf = dict(cluster[i + 1].split("=", 1) for i, word in enumerate(cluster) if word == "--conf")
    assert conf["spark.connect.grpc.binding.address"] == "0.0.0.0"
    assert "spark.default.parallelism" not in conf and "--jars" not in cluster  # the cluster counts its cores
