"""The distributed path, for real: a Spark standalone master and worker on 127.0.0.1 (pyspark's own
`spark-class` launcher, as the docker-compose services run them), `clwl run --master spark://...` on the
samples, and the published tables equal those of the embedded local-mode run (the session's shared
``samples_lake``: the same command, every sample date, in local mode).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pyspark
import pytest

ROOT = Path(__file__).resolve().parents[2]
LANDING = ROOT / "samples" / "landing"
COMPARED = {
    "routing_replay": ["msg_id"],
    "stuck_messages": ["msg_id"],
    "distribution": ["sending_qmgr", "queue", "interval_start", "qmgr", "source"],
}

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.extended]
SECRET = "test-only-" + os.urandom(8).hex()  # made per run; the driver gets it from CLWL_SPARK_AUTH_SECRET


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(predicate, seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.5)
    raise TimeoutError(f"timed out waiting for {what}")


def _master_state(ui_port: int) -> dict:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
            return json.load(r)
    except OSError:
        return {}


@pytest.fixture
def standalone(tmp_path):
    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_MASTER_HOST": "127.0.0.1",
           "SPARK_WORKER_DIR": str(tmp_path / "work"), "SPARK_LOG_DIR": str(tmp_path / "logs"),
           "PYSPARK_PYTHON": sys.executable,
           # As docker-compose.yml runs them: the daemons require Spark authentication with a shared secret.
           "SPARK_DAEMON_JAVA_OPTS": f"-Dspark.authenticate=true -Dspark.authenticate.secret={SECRET}"}
    port, ui, wui = _free_port(), _free_port(), _free_port()
    logs = (tmp_path / "master.log").open("w"), (tmp_path / "worker.log").open("w")
    master = subprocess.Popen([str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)], env=env, stdout=logs[0],
                              stderr=subprocess.STDOUT)
    worker = None
    try:
        _wait_for(lambda: _master_state(ui).get("status") == "ALIVE", 60, "the master")
        worker = subprocess.Popen([str(spark_class), "org.apache.spark.deploy.worker.Worker",
                                   f"spark://127.0.0.1:{port}", "--host", "127.0.0.1", "--cores", "2",
                                   "--memory", "3g", "--webui-port", str(wui)], env=env, stdout=logs[1],
                                  stderr=subprocess.STDOUT)
        _wait_for(lambda: len(_master_state(ui).get("workers", [])) == 1, 60, "the worker to register")
        yield f"spark://127.0.0.1:{port}", ui
    finally:
        for p in (worker, master):
            if p is not None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
        for f in logs:
            f.close()


def _gold(lake: Path, table: str, keys: list[str]):
    from clwl.lake import Lake

    df = Lake(lake).rows(f"gold.{table}").to_pandas()
    return df.sort_values(["run_date", *keys]).reset_index(drop=True)


def _run(master: str, lake: Path, landing: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clwl.cli", "run", "--landing", str(landing), "--lake", str(lake),
                           "--master", master], capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "CLWL_SPARK_AUTH_SECRET": SECRET})


def test_clwl_run_on_a_standalone_cluster_equals_local_mode(standalone, samples_lake, tmp_path):
    master, ui = standalone
    remote = _run(master, tmp_path / "lake-cluster", LANDING)
    assert remote.returncode == 0, remote.stdout[-3000:] + remote.stderr[-3000:]
    # The job really ran on the cluster: the master saw an application finish.
    state = _master_state(ui)
    assert state.get("completedapps") or state.get("activeapps"), state
    for table, keys in COMPARED.items():
        a, b = _gold(tmp_path / "lake-cluster", table, keys), _gold(samples_lake.lake, table, keys)
        assert len(a) > 0 or table == "stuck_messages"
        assert a.equals(b), f"{table} differs between the standalone cluster and local mode"
