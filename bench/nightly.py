"""The nightly DAG's whole run, a JVM per task against one Spark Connect server (issue 30 item 2).

    .venv/bin/python bench/nightly.py [--landing DIR] [--date YYYY-MM-DD] [--repeat 1] [--keep DIR]

What the scheduler's LocalExecutor does with `clwl_nightly`, task by task, each in a process of its own:

1. A temporary AIRFLOW_HOME with a SQLite metadata database (`airflow db migrate` once), this checkout's dags/ as
   the DAGs folder, no examples (as tests/dags/conftest.py sets Airflow up).
2. One Spark Connect server (spark.connect_server.start_server, `local[2]`, on a free loopback port, in its own
   process group) started once; its start is timed apart: it is paid once per night, not per run.
3. For each of --repeat pairs, the two modes in turn (alternated: pair 1 a JVM per task first, pair 2 the server
   first, ...), each on a fresh lake: a DAG run made by `dag.test(mark_success_pattern=".*")` in a process of its
   own (not timed; run_date in the run's conf), then `airflow tasks test clwl_nightly <task> <run id>` for ingest,
   changed, replay, detect, publish and report in order, each a fresh process timed from its start to its exit.
   The whole run is the sum of the six. "A JVM per task": CLWL_SPARK_REMOTE empty, each Spark task starts a
   driver of its own; "one Connect server": CLWL_SPARK_REMOTE names the server, every task attaches to it.
   `dag.test()` alone is not the "before": it runs every task in one process, where get_spark reuses the first
   task's JVM.
4. Printed: each run's seconds per task and whole, the medians per mode and the server's ratio to a JVM per task,
   each mode's median against the floor (the date's put CSVs read and written as one Delta table by a fresh
   process, bench/pipeline.py's samples floor, taken before every run; issue 45's goal: the server's within 3x),
   the load average at the start and the end, which tasks started a driver JVM of their own. Checked: every task
   succeeded (its state in the metadata database), no task attached to the server started a JVM, every lake
   published the date (gold/_published.json and a `published` run_summary row), and the gold tables of every lake
   equal the first's (tests/lake_compare.py comparable_rows over clwl.lake.door.GOLD_TABLES): "identical", else the
   script fails naming the table.

Each process's output is kept under <work>/logs/ (--keep DIR: the work folder, kept; else a temporary one, removed
when every check passed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DAG_ID = "clwl_nightly"
TASKS = ("ingest", "changed", "replay", "detect", "publish", "report")
MODES = ("a JVM per task", "one Connect server")
AIRFLOW = Path(sys.executable).with_name("airflow")
DATE_FOLDER = re.compile(r"\A\d{4}-\d{2}-\d{2}\Z")
BASE_LOGICAL = dt.datetime(2026, 1, 1, 3, 0, tzinfo=dt.timezone.utc)  # each DAG run one minute after the last

# Makes the DAG run in a process of its own (the DAGs' Asset URIs follow that process's CLWL_LAKE); prints its id.
MAKE_RUN = """
import datetime as dt, sys
sys.path.insert(0, sys.argv[1])  # as the DAG processor's BundleDagBag does: the DAGs import clwl_dag_support
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=sys.argv[1])
assert not bag.import_errors, bag.import_errors
dag = bag.dags[sys.argv[2]]
run = dag.test(logical_date=dt.datetime.fromisoformat(sys.argv[3]), run_conf={"run_date": sys.argv[4]},
               mark_success_pattern=".*")
print("RUN_ID", run.run_id)
"""


def last_date(landing: Path) -> str:
    dates = sorted(p.name for p in landing.iterdir() if p.is_dir() and DATE_FOLDER.match(p.name))
    if not dates:
        raise SystemExit(f"bench/nightly.py: {landing}: no YYYY-MM-DD folder")
    return dates[-1]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def airflow_env(home: Path) -> dict[str, str]:
    """This process's environment with Airflow pointed at the temporary home (no CLWL_* of the caller's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "CLWL_"))}
    return {**env, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO"}


def run_logged(cmd: list[str], env: dict[str, str], log: Path, what: str) -> tuple[float, str, bool]:
    """Run ``cmd`` to its exit, its output to ``log``: (seconds from start to exit, output, whether it started a
    Spark driver JVM). Fails the script naming the log when it exits non-zero."""
    wall_start, started = time.time(), time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    out, _ = proc.communicate()
    seconds = time.perf_counter() - started
    log.write_text(out, encoding="utf-8")
    if proc.returncode != 0:
        raise SystemExit(f"{what} failed (exit {proc.returncode}), see {log}:\n{out[-3000:]}")
    return seconds, out, started_a_jvm(wall_start, env.get("AIRFLOW_HOME"))


def started_a_jvm(since: float, airflow_home: str | None) -> bool:
    """Whether a driver JVM was started since ``since``: get_spark sends a JVM's output to a file when it starts one,
    in a task the file dags/clwl_dag_support.spark_log_file names under Airflow's log folder
    (<AIRFLOW_HOME>/logs/clwl-spark/...), elsewhere the temp folder's clwl-spark-<pid>.log. Any such file written
    since the command started counts (the tasks run one at a time, and the bench alone on the machine).
    Attached to a Connect server, a task starts none (as tests/spark/test_spark_connect.py checks)."""
    places = list(Path(tempfile.gettempdir()).glob("clwl-spark-*.log"))
    if airflow_home:
        places += list((Path(airflow_home) / "logs" / "clwl-spark").rglob("*.log"))
    return any(p.stat().st_mtime >= since for p in places)


def task_state(home: Path, run_id: str, task: str) -> str | None:
    with sqlite3.connect(home / "airflow.db") as db:
        row = db.execute("SELECT state FROM task_instance WHERE dag_id = ? AND run_id = ? AND task_id = ?",
                         (DAG_ID, run_id, task)).fetchone()
    return row[0] if row else None


def nightly_run(home: Path, work: Path, label: str, index: int, landing: Path, date: str,
                remote: str) -> tuple[Path, dict[str, float], list[str]]:
    """One DAG run on a fresh lake: (the lake, seconds per task (each `airflow tasks test` process, start to
    exit), the tasks that started a driver JVM of their own)."""
    lake = work / f"lake-{label}"
    logs = work / "logs"
    env = {**airflow_env(home), "CLWL_LANDING": str(landing), "CLWL_LAKE": str(lake), "CLWL_SPARK_REMOTE": remote}
    logical = (BASE_LOGICAL + dt.timedelta(minutes=index)).isoformat()
    _, out, _ = run_logged([sys.executable, "-c", MAKE_RUN, str(ROOT / "dags"), DAG_ID, logical, date], env,
                           logs / f"{label}-dagrun.log", f"{label}: dag.test")
    found = re.search(r"^RUN_ID (\S+)$", out, re.M)
    if not found:
        raise SystemExit(f"{label}: dag.test printed no run id, see {logs / f'{label}-dagrun.log'}")
    run_id = found.group(1)
    seconds: dict[str, float] = {}
    jvms: list[str] = []
    for task in TASKS:
        log = logs / f"{label}-{task}.log"
        seconds[task], _, jvm = run_logged([str(AIRFLOW), "tasks", "test", DAG_ID, task, run_id], env, log,
                                           f"{label}: {task}")
        state = task_state(home, run_id, task)
        if state != "success":
            raise SystemExit(f"{label}: task {task} ended {state!r}, see {log}")
        if jvm:
            jvms.append(task)
    if remote and jvms:
        raise SystemExit(f"{label}: attached to {remote}, yet {', '.join(jvms)} started a JVM of its own")
    return lake, seconds, jvms


def check_published(lake: Path, date: str) -> None:
    from clwl.lake.door import Lake
    from tests.lake_compare import comparable_rows

    if date not in Lake(lake).published().dates:
        raise SystemExit(f"{lake}: {date} is not in gold/_published.json")
    if not any(f'"run_date": "{date}"' in r and '"status": "published"' in r
               for r in comparable_rows(lake, "gold.run_summary")):
        raise SystemExit(f"{lake}: no published gold.run_summary row for {date}")


def check_identical(lakes: list[Path]) -> None:
    from clwl.lake.door import GOLD_TABLES
    from tests.lake_compare import comparable_rows

    first, *others = lakes
    for table in GOLD_TABLES:
        expected = comparable_rows(first, f"gold.{table}")
        for other in others:
            if comparable_rows(other, f"gold.{table}") != expected:
                raise SystemExit(f"gold.{table} differs between {first} and {other}")


def row(name: str, mode: str, seconds: dict[str, float], whole: float | None = None, ratio: str = "") -> str:
    """One line: the tasks' seconds and the whole run (their sum, unless given: a median of sums)."""
    cells = " ".join(f"{seconds[t]:8.1f}" for t in TASKS)
    return f"{name:7} {mode:19} {cells} {sum(seconds.values()) if whole is None else whole:9.1f}{ratio}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--landing", default=str(ROOT / "samples" / "landing"),
                    help="the landing root (default: the bundled samples)")
    ap.add_argument("--date", help="the run date (default: the landing's last date folder)")
    ap.add_argument("--repeat", type=int, default=1, help="pairs of runs, the two modes alternated (default 1)")
    ap.add_argument("--keep", help="work here (Airflow home, lakes, logs) and keep it")
    a = ap.parse_args()

    landing = Path(a.landing).absolute()
    if not landing.is_dir():
        raise SystemExit(f"bench/nightly.py: --landing {landing}: no such folder")
    date = a.date or last_date(landing)
    if not (landing / date).is_dir():
        raise SystemExit(f"bench/nightly.py: --date {date}: no folder {landing / date}")
    work = Path(a.keep).absolute() if a.keep else Path(tempfile.mkdtemp(prefix="clwl-bench-nightly-"))
    (work / "logs").mkdir(parents=True, exist_ok=True)
    home = work / f"airflow-{os.getpid()}"
    home.mkdir()
    print(f"landing {landing}, run date {date}, {a.repeat} pair(s), work {work}", flush=True)
    load_start = load()
    print(f"load average at start: {load_start}", flush=True)

    seconds, _, _ = run_logged([str(AIRFLOW), "db", "migrate"], airflow_env(home), work / "logs" / "db-migrate.log",
                            "airflow db migrate")
    print(f"airflow db migrate: {seconds:.1f} s (not counted)", flush=True)

    from spark.connect_server import start_server

    port = free_port()
    started = time.perf_counter()
    server = start_server(port, log_path=work / "logs" / "connect-server.log")
    server_start = time.perf_counter() - started
    remote = f"sc://localhost:{port}"
    print(f"Spark Connect server on {remote}: up in {server_start:.1f} s (not counted: once per night)", flush=True)

    from pipeline import samples_floor_once  # bench/pipeline.py: the samples' floor, a fresh process

    # The floor of issue 45's nightly target (3x): the date's put CSVs read and written as one Delta table by a
    # fresh process, JVM start included; taken before every DAG run (the median of all), as the load moves.
    puts = str(landing / date / "*" / "puts*.csv")
    floors = [samples_floor_once(work, puts)]
    runs: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
    lakes: list[Path] = []
    try:
        for n in range(a.repeat):
            order = MODES if n % 2 == 0 else MODES[::-1]
            for mode in order:
                label = f"{n + 1}-{'jvm' if mode == MODES[0] else 'connect'}"
                index = len(lakes)
                print(f"pair {n + 1}, {mode}: load {load()}", flush=True)
                lake, figures, jvms = nightly_run(home, work, label, index, landing, date,
                                                  remote if mode == MODES[1] else "")
                if server.poll() is not None:
                    raise SystemExit(f"the Spark Connect server exited (code {server.returncode}), see "
                                     f"{work / 'logs' / 'connect-server.log'}")
                check_published(lake, date)
                lakes.append(lake)
                runs[mode].append(figures)
                floors.append(samples_floor_once(work, puts))
                print(row(f"pair {n + 1}", mode, figures) + f"   driver JVMs started: {len(jvms)} "
                      f"({', '.join(jvms) or 'none'})", flush=True)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)

    check_identical(lakes)
    load_end = load()
    medians = {m: {t: statistics.median(r[t] for r in runs[m]) for t in TASKS} for m in MODES}
    whole = {m: statistics.median(sum(r.values()) for r in runs[m]) for m in MODES}
    print(f"\n{DAG_ID}, run date {date}, {a.repeat} pair(s); seconds, each task a fresh process (start to exit)")
    print(f"{'':7} {'mode':19} {' '.join(f'{t:>8}' for t in TASKS)} {'whole':>9}")
    for n in range(a.repeat):
        for mode in MODES:
            print(row(f"pair {n + 1}", mode, runs[mode][n]))
    for mode in MODES:
        ratio = f"  ({whole[mode] / whole[MODES[0]]:.2f})" if mode == MODES[1] else ""
        print(row("median", mode, medians[mode], whole[mode], ratio))
    print(f"Connect server start: {server_start:.1f} s, once (not in the figures)")
    print(f"ratio, one Connect server to a JVM per task (median whole run): {whole[MODES[1]] / whole[MODES[0]]:.2f}")
    floor = statistics.median(floors)
    print(f"floor: the date's put CSVs read and written as one Delta table, a fresh process: median {floor:.1f} s of "
          f"{len(floors)} ({', '.join(f'{f:.1f}' for f in floors)})")
    for mode, goal in zip(MODES, (None, 3)):
        verdict = f" (goal {goal}x): {'met' if whole[mode] <= goal * floor else 'NOT met'}" if goal else ""
        print(f"{'target: ' if goal else ''}nightly, {mode} / floor = {whole[mode]:.1f} / {floor:.1f} s = "
              f"{whole[mode] / floor:.2f}{verdict}")
    print(f"every lake published {date}; gold tables of the {len(lakes)} lakes: identical")
    print(f"load average: start {load_start}, end {load_end}")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
