"""The distributed path, for real: a Spark standalone master and two workers on 127.0.0.1 (pyspark's own
`spark-class` launcher, as the docker-compose services run them) whose only shared state is the object store, with
Spark authentication on; `clwl run --master spark://... --lake s3://...` on the samples; and every published gold
table equals that of the embedded local-mode run (the session's ``samples_lake``: the same command, every sample
date, in local mode).

What "shares nothing but the store" means here, node by node:

- each worker has its own work folder (SPARK_WORKER_DIR: its executors' working folders, the jars they fetch),
  its own scratch (SPARK_LOCAL_DIRS, TMPDIR) and log folder, none of them the driver's;
- each worker's environment is a bare one (PATH, HOME, JAVA_HOME, the locale) plus what a node of such a cluster
  is given: the store's AWS_* variables (how executors get credentials: the SDK's provider reads them; they are
  never in Spark's configuration), the interpreter, and the daemons' authentication;
- the driver runs in a folder of its own with a temp folder of its own; the Delta and S3A jars reach the executors
  from the driver's file server (spark.jars), the pipeline's code through SparkContext.addPyFile;
- the lake is on the store only: nothing of it is written under this test's folders or the driver's current
  folder (no `s3:` folder, no Delta log).

The landing is not read from a node's disk either: with the lake on a store and a cluster master, the driver puts
the files it is about to parse under the run's scratch prefix on the store and each parse task copies its files from
there (spark/ingest/landing_stage.py), so a worker needs no landing folder. (On one host the workers could still see
the driver's folder; tests/unit/test_landing_stage.py shows a staged file parses as the landing file does, and that
a task never falls back to a local path it was not given.)

Authentication: the daemons require spark.authenticate with a shared secret, and RPC encryption
(spark.network.crypto.enabled, which authenticates each connection by that secret too); the driver takes the secret
from CLWL_SPARK_AUTH_SECRET and the encryption from its spark-defaults.conf; the executors get both from their
worker (the secret in their environment, not on their command line).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest

from clwl.lake.door import GOLD_TABLES, Lake
from tests.lake_compare import EMPTY_ON_SAMPLES, comparable_rows

ROOT = Path(__file__).resolve().parents[2]
LANDING = ROOT / "samples" / "landing"
SPARK_HOME = Path(pyspark.__file__).parent
WORKERS = 2
RUN_SECONDS = 900

pytestmark = [pytest.mark.objectstore, pytest.mark.spark, pytest.mark.slow, pytest.mark.extended]
SECRET = "test-only-" + os.urandom(8).hex()  # made per run; the driver gets it from CLWL_SPARK_AUTH_SECRET
#: What the daemons require of every connection, and so of the driver and the executors.
SECURITY = {"spark.authenticate": "true", "spark.network.crypto.enabled": "true"}
#: What a node keeps of this process's environment: enough to find Java and run a shell; nothing of the lake.
BARE_ENV = ("PATH", "HOME", "JAVA_HOME", "LANG", "LC_ALL", "USER", "LOGNAME")


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


@dataclass
class Node:
    """One node's folders, under ``root``: nothing in them is another node's."""

    name: str
    root: Path

    def __post_init__(self) -> None:
        for folder in (self.work, self.local, self.tmp, self.logs):
            folder.mkdir(parents=True)

    @property
    def work(self) -> Path:
        """SPARK_WORKER_DIR: the executors' working folders (their logs, the jars and code they fetch)."""
        return self.root / "work"

    @property
    def local(self) -> Path:
        """SPARK_LOCAL_DIRS: shuffle and block files."""
        return self.root / "local"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def env(self, **more: str) -> dict[str, str]:
        bare = {k: v for k, v in os.environ.items() if k in BARE_ENV}
        daemon_opts = " ".join(f"-D{k}={v}" for k, v in SECURITY.items())
        return {**bare, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_WORKER_DIR": str(self.work), "SPARK_LOCAL_DIRS": str(self.local), "TMPDIR": str(self.tmp),
                "SPARK_LOG_DIR": str(self.logs), "PYSPARK_PYTHON": sys.executable,
                # As docker-compose.yml runs them: the daemons require Spark authentication with a shared secret.
                "SPARK_DAEMON_JAVA_OPTS": f"{daemon_opts} -Dspark.authenticate.secret={SECRET}", **more}


@dataclass
class Cluster:
    url: str
    ui: int
    workers: list[Node]


def _stop(processes: list[subprocess.Popen]) -> None:
    for p in reversed(processes):
        p.terminate()
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.fixture
def cluster(tmp_path, object_store):
    """A master and two workers (one core, 2 GiB each), every one with its own folders and environment; only
    the workers get the store's variables (their executors read and write the lake)."""
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    port, ui = _free_port(), _free_port()
    master = Node("master", tmp_path / "master")
    workers = [Node(f"worker-{i}", tmp_path / f"worker-{i}") for i in range(1, WORKERS + 1)]
    processes: list[subprocess.Popen] = []
    logs = []

    def start(node: Node, args: list[str], env: dict[str, str]) -> None:
        out = (node.logs / "daemon.out").open("w")
        logs.append(out)
        processes.append(subprocess.Popen([spark_class, *args], env=env, cwd=node.root, stdout=out,
                                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))

    try:
        start(master, ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                       "--webui-port", str(ui)], master.env())
        _wait_for(lambda: _master_state(ui).get("status") == "ALIVE", 60, "the master")
        for node in workers:
            start(node, ["org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host", "127.0.0.1",
                         "--cores", "1", "--memory", "2g", "--webui-port", str(_free_port())],
                  node.env(**object_store.env()))
        _wait_for(lambda: sum(w.get("state") == "ALIVE" for w in _master_state(ui).get("workers", [])) == WORKERS,
                  90, "the workers to register")
        yield Cluster(f"spark://127.0.0.1:{port}", ui, workers)
    finally:
        _stop(processes)
        for out in logs:
            out.close()


def _driver_env(store, driver: Node) -> dict[str, str]:
    """The driver's environment: this process's, without any lake or credentials of its own, plus the store's
    variables, the secret, and a Spark configuration folder that turns on RPC encryption."""
    conf = driver.root / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("".join(f"{k} {v}\n" for k, v in SECURITY.items()))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("AWS_") and k not in ("CLWL_LAKE", "CLWL_SPARK_REMOTE", "CLWL_SPARK_MASTER")}
    return {**env, **store.env(), "CLWL_SPARK_AUTH_SECRET": SECRET, "SPARK_CONF_DIR": str(conf),
            "TMPDIR": str(driver.tmp), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}


def _run_watching(cluster: Cluster, args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, dict]:
    """Run `clwl` on the cluster, polling the master meanwhile: (exit code, its output, the most cores each
    worker (by id) had in use during the run)."""
    out_path = cwd / "clwl-run.out"
    most: dict[str, int] = {}
    with out_path.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "clwl", *args], env=env, cwd=cwd, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        end = time.monotonic() + RUN_SECONDS
        try:
            while proc.poll() is None:
                if time.monotonic() > end:
                    raise TimeoutError(f"clwl run took over {RUN_SECONDS} s")
                for w in _master_state(cluster.ui).get("workers", []):
                    most[w["id"]] = max(most.get(w["id"], 0), int(w.get("coresused", 0)))
                time.sleep(0.5)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return proc.returncode, out_path.read_text(errors="replace"), most


def _texts(node: Node) -> str:
    """The node's logs and its executors' folders as text, the jars left out (executor and daemon logs, the
    scripts they ran); its scratch folders are not read (the worker removes them as the application ends)."""
    texts = []
    for p in (*node.work.rglob("*"), *node.logs.rglob("*"), *node.root.glob("*.out")):
        try:
            if p.is_file() and p.suffix != ".jar":
                texts.append(p.read_text(errors="replace"))
        except FileNotFoundError:  # removed while read
            continue
    return "\n".join(texts)


def test_clwl_run_on_a_cluster_sharing_only_the_store_equals_local_mode(samples_lake, object_store, cluster,
                                                                        tmp_path, monkeypatch):
    driver = Node("driver", tmp_path / "driver")
    lake = object_store.lake_uri("cluster")
    code, output, cores = _run_watching(cluster, ["run", "--landing", str(LANDING), "--lake", lake,
                                                  "--master", cluster.url],
                                        _driver_env(object_store, driver), driver.root)
    assert code == 0, output[-5000:]
    staged = re.findall(r"staged (\d+) landing files \([\d.,]+ MiB\) on the lake's store for the executors", output)
    landing = [p for p in LANDING.rglob("*") if p.is_file()]
    assert staged and sum(map(int, staged)) == len(landing), (staged, len(landing), output[-3000:])

    # Both workers ran an executor of the application: each had its core in use, and each has the application's
    # executor folder, with the Delta and S3A jars fetched from the driver (not found on the node).
    state = _master_state(cluster.ui)
    assert len(cores) == WORKERS and all(n > 0 for n in cores.values()), (cores, state)
    apps = state.get("completedapps", []) + state.get("activeapps", [])
    assert len(apps) == 1, apps
    for node in cluster.workers:
        executors = [d for d in node.work.glob(f"{apps[0]['id']}/*") if (d / "stderr").is_file()]
        assert executors, f"{node.name} ran no executor of {apps[0]['id']}: {sorted(node.work.rglob('*'))[:20]}"
        log = "".join((d / "stderr").read_text(errors="replace") for d in executors)
        for jar in ("hadoop-aws-", "delta-spark_"):
            assert any(p.name.endswith(".jar") and jar in p.name for d in executors for p in d.iterdir()), (node, jar)
            assert any("Fetching spark://" in line and jar in line for line in log.splitlines()), (node.name, jar)
        # the executors were started with the daemons' security, and the secret did not travel on a command line
        command = next(line for line in log.splitlines() if "Spark Executor Command:" in line)
        for key, value in SECURITY.items():
            assert f"-D{key}={value}" in command, (key, command)
    for node in (*cluster.workers, driver):
        seen = _texts(node)
        assert SECRET not in seen and object_store.secret_key not in seen, f"a secret is in a file of {node.name}"

    # Every published gold table on the store equals local mode's, but for the columns that differ by design.
    object_store.use(monkeypatch)
    local, remote = Lake(samples_lake.lake), Lake(lake)
    assert set(remote.published().dates) == set(local.published().dates) == {"2026-11-19", "2026-11-20"}
    for table in GOLD_TABLES:
        key = f"gold.{table}"
        rows = comparable_rows(remote, key)
        assert rows == comparable_rows(local, key), f"{key} differs between the cluster and local mode"
        assert rows or table in EMPTY_ON_SAMPLES, f"{key} is empty"

    # The lake lives on the store only: no node wrote a local copy of it (the driver's current folder included).
    written = [p for p in tmp_path.rglob("*") if p.name in ("s3:", "s3a:", "_delta_log", "_published.json")]
    assert written == [], written
