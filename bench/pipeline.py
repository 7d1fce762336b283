"""Pipeline benchmark: `clwl run` stages on a generated estate, against a bare Spark pass as the floor.

    .venv/bin/python bench/pipeline.py [--messages 1000000] [--senders 4] [--keep DIR] [--lake DIR]
                                       [--landing DIR]

1. `clwl generate` writes an estate with --messages messages in one day (not part of the pipeline's time).
2. The pipeline runs every stage in one process (local[2]), and each stage's wall time is printed: ingest,
   replay, detect, validate, publish (the gold writes), report.
3. In the same run, the floor: a bare Spark read of silver.message_events and a Delta write of it (median of
   3), which is the least any replay over that table can cost; alternately with it, the replay stage again
   (median of 3), so that a warm replay is compared with a warm floor. Goals: replay within 2x of the floor
   (issues 4 and 6); the whole run within 10x of it at 1M messages and 6x at 10M, the report under 15 s at 10M
   (issue 45: each printed as a `target:` line, met or not).
4. `clwl query` latency on the lake just built (no JVM): typical questions, each in a fresh process, median of 3.
Memory: peaks sampled every 0.2 s while the pipeline runs: the driver JVM (local mode: it is also the
executor) and the Python worker processes; and the driver Python process's own peak RSS.
With --lake DIR (a lake a previous --keep run left), steps 1-2 are skipped and only the floor and the queries
run.

    .venv/bin/python bench/pipeline.py --trace [--messages 1000000] [--keep DIR]

The same estate (same seed) generated twice, as puts.csv and as amqsact activity trace, and the whole pipeline run
on each in one Spark session, CSV first: the traced ingest per message against the CSV ingest (issue 16's goal:
2x), the trace's parse rate (the ingest's parse step), and each run against its own floor. With --keep, estates
already in DIR are used again.

    .venv/bin/python bench/pipeline.py --channel-trace [--messages 100000] [--keep DIR]

The same estate (puts.csv) three times: without the channel agents' trace, with it at both ends as amqsact, and as
amqsevt JSON (clwl generate --channel-trace [--trace-format json]); the pipeline on each: the ingest per message
against the CSV-only ingest, the parse step's rate and what the trace adds per traced message (issue 29).

    .venv/bin/python bench/pipeline.py --samples [--repeat 1]

The bundled samples' `clwl run` (two dates, about a thousand messages) against its own floor (issue 18's goal: 4x):
the floor is a fresh process that starts a Delta-enabled Spark session from the resolved jars, reads the samples'
put CSVs and writes them as one Delta table, timed from the process start. Two runs are set against it each time:
the whole pipeline in this process, timed from before its Spark session starts (the session is stopped after it;
from the second repeat on the JVM is the first run's, started and warmed), and the target's run, a `clwl run` as a
user starts it: a fresh process, its JVM start and cold JIT included, as the floor's. The floor is taken before
and after each run (median of all), since the machine's load moves; peak memory per stage as above.
Then the same `clwl run` again in a fresh process, three times, with nothing new (issue 30's goal: under 10 s;
no Spark starts).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CLWL = Path(sys.executable).with_name("clwl")  # the command line of this virtualenv

QUERIES = (
    ("stuck messages per channel", "SELECT channel, why, count(*) AS n FROM stuck_messages GROUP BY channel, why "
                                   "ORDER BY n DESC"),
    ("destinations of one queue, per hour", "SELECT date_trunc('hour', put_time) AS hour, final_qmgr, count(*) AS n "
                                            "FROM routing_replay WHERE queue = 'APP.ORDERS' GROUP BY 1, 2 "
                                            "ORDER BY 1, 2"),
    ("unexpected distribution rows", "SELECT sending_qmgr, queue, qmgr, expected, observed FROM distribution "
                                     "WHERE verdict = 'unexpected'"),
)


class PeakMemory:
    """Peak memory of this process's children (the JVM; the Python workers), sampled on a thread, overall and
    per pipeline stage (`stage` is set from the progress lines). Workers are counted by PSS: they are forked
    from one daemon and share its pages, which summed RSS would count once per worker."""

    def __init__(self, every: float = 0.2):
        import psutil

        self._psutil, self.every = psutil, every
        self.jvm = self.workers = 0
        self.stage = "start"
        self.parse_records, self.parse_seconds = 0, float("nan")
        self.by_stage: dict[str, list[int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = self._psutil.Process()
        while not self._stop.is_set():
            jvm = workers = 0
            for c in me.children(recursive=True):
                try:
                    name = c.name()
                    if "java" in name:
                        jvm += c.memory_info().rss
                    else:
                        workers += c.memory_full_info().pss
                except self._psutil.Error:
                    continue
            self.jvm, self.workers = max(self.jvm, jvm), max(self.workers, workers)
            peak = self.by_stage.setdefault(self.stage, [0, 0])
            peak[0], peak[1] = max(peak[0], jvm), max(peak[1], workers)
            self._stop.wait(self.every)

    def progress(self, message: str) -> None:
        """The pipeline's progress callback: prints, and follows the stage ("[2/5] 2026-11-19: replay ...") and
        the ingest's parse step (its seconds and records, for the parse rate)."""
        print("  | " + message, flush=True)
        p = re.match(r"parse \S+: .*?(\d+) records read.*\(([\d.]+)s\)$", message.strip())
        if p:
            self.parse_records, self.parse_seconds = int(p.group(1)), float(p.group(2))
        m = re.match(r"\[\d+/\d+\] (?:\S+: )?(\w+)", message)
        if m:
            self.stage = m.group(1)

    def __enter__(self) -> "PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def readme_queries(run_date: str) -> list[tuple[str, list[str]]]:
    """The README's `clwl query` examples (issue 18's goal: each under 1 s on the 10M lake), with the samples'
    date replaced by ``run_date``: (label, arguments after `clwl`)."""
    import shlex

    found = []
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith('clwl query "'):
            args = [a.replace("2026-11-20", run_date) for a in shlex.split(line, comments=True)[1:]]
            found.append((" ".join(args[1].split()[:8])[:38], args))
    return found


def query_latency(lake: Path, run_date: str) -> None:
    print("clwl query (fresh process each time, no JVM), median of 3; the typical questions, then the README's:")
    queries = [(name, ["query", sql]) for name, sql in QUERIES] + readme_queries(run_date)
    for name, args in queries:
        times = []
        for _ in range(3):
            t = time.perf_counter()
            done = subprocess.run([str(CLWL), *args, "--lake", str(lake)], capture_output=True, text=True)
            times.append(time.perf_counter() - t)
            if done.returncode != 0:
                print(f"  {name}: failed ({done.returncode}): {done.stderr.strip()[:200]}")
                break
        else:
            rows = max(0, len(done.stdout.strip().splitlines()) - 2)
            median = statistics.median(times)
            print(f"  {name:<38} {median:6.2f} s   (about {rows} lines out; goal under 1 s: "
                  f"{'met' if median < 1 else 'NOT met'})")


def floor_once(spark, config, root: Path) -> float:
    """One bare pass: Spark reads silver.message_events and writes it to a new Delta table; its seconds."""
    from spark.tables import read_table

    t = time.perf_counter()
    df = read_table(spark, config, "silver.message_events")
    df.write.format("delta").mode("overwrite").save(str(root / "floor"))
    seconds = time.perf_counter() - t
    shutil.rmtree(root / "floor", ignore_errors=True)
    return seconds


def floor_seconds(spark, config, root: Path) -> float:
    return statistics.median(floor_once(spark, config, root) for _ in range(3))


def warm_replay_and_floor(spark, config, root: Path, run_date: str) -> tuple[float, float]:
    """Medians of 3, taken alternately in the session the pipeline ran in: the replay stage again (timelines,
    read, replay, staged write) and the floor. Both warm, so their ratio compares like with like; the
    pipeline's own replay figure also pays the first replay's start-up in the session (Python worker imports,
    the JVM's first run of the Arrow and write code)."""
    from spark.run import PipelineRun
    from spark.stages import replay_stage

    floors, replays = [], []
    for _ in range(3):
        floors.append(floor_once(spark, config, root))
        t = time.perf_counter()
        replay_stage(spark, PipelineRun(config, "bench"), run_date)
        replays.append(time.perf_counter() - t)
    return statistics.median(replays), statistics.median(floors)


SAMPLES_FLOOR = """
import sys, time
t = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from spark.config import PipelineConfig
from spark.session import get_spark
spark = get_spark(PipelineConfig.from_env().master, app_name="clwl-floor")
puts = spark.read.option("header", True).csv(sys.argv[2])
puts.write.format("delta").mode("overwrite").save(sys.argv[3])
print(time.perf_counter() - t)
"""


def samples_floor_once(root: Path, puts: str | None = None) -> float:
    """The samples' floor in a fresh process (JVM start included, as `clwl run` pays it): seconds. ``puts``: a
    glob of the put CSVs to read (default: every date of the bundled samples)."""
    from spark.config import REPO_ROOT

    puts = puts or str(REPO_ROOT / "samples" / "landing" / "*" / "*" / "puts*.csv")
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", SAMPLES_FLOOR, str(ROOT), puts, str(root / "floor")],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - t
    shutil.rmtree(root / "floor", ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(f"samples floor failed: {done.stderr.strip()[-500:]}")
    return seconds


def first_line_seconds(root: Path) -> float:
    """Seconds from starting `clwl run` on the samples (a fresh process) to its first line of output; the run is
    then stopped (its whole process group: the JVM too)."""
    t = time.perf_counter()
    proc = subprocess.Popen([str(CLWL), "run", "--lake", str(root / "first-line")], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    proc.stdout.readline()
    seconds = time.perf_counter() - t
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    shutil.rmtree(root / "first-line", ignore_errors=True)
    return seconds


def samples_run(repeat: int) -> None:
    """`clwl run` on the bundled samples against the samples' floor (goal: 4x), `repeat` times."""
    from spark.config import REPO_ROOT, PipelineConfig
    from spark.pipeline import run_pipeline
    from spark.session import get_spark

    root = Path(tempfile.mkdtemp(prefix="clwl-bench-samples-"))
    first = first_line_seconds(root)
    print(f"clwl run's first line of output: {first:.2f} s after its start (goal 10 s)")
    floors = [samples_floor_once(root)]
    for n in range(repeat):
        lake = root / f"lake{n}"
        config = PipelineConfig.from_env(lake=lake, landing=REPO_ROOT / "samples" / "landing")
        with PeakMemory() as peak:
            t = time.perf_counter()
            spark = get_spark(config.master)
            started = time.perf_counter() - t
            outcome = run_pipeline(config, spark=spark, progress=peak.progress)
            total = time.perf_counter() - t
            spark.stop()
        floors.append(samples_floor_once(root))
        floor = statistics.median(floors)
        state = ", ".join(f"{d.run_date} {'published' if d.published else 'BLOCKED'}" for d in outcome.dates)
        print(f"samples run {n + 1}: {state}; {sum(d.messages for d in outcome.dates):,} messages; load average "
              f"{os.getloadavg()[0]:.2f}")
        print_stages({"spark": started, **outcome.seconds, "whole": total}, floor,
                     "fresh process: Spark session, samples' put CSVs read and written as one Delta table (median of "
                     f"{len(floors)}: {', '.join(f'{f:.1f}' for f in floors)})")
        print(f"samples run in this process's JVM / floor = {total / floor:.2f}"
              + (" (the JVM's first run)" if n == 0 else " (a warm JVM: the bench's earlier runs started it)"))
        print_memory(peak)
        # What a user waits for: `clwl run` as its own process, JVM start and a cold JIT included, as the floor's.
        cold = fresh_run_seconds(root / f"fresh{n}")
        floors.append(samples_floor_once(root))
        floor = statistics.median(floors)
        print(f"target: samples cold (a fresh `clwl run` process) / floor = {cold:.1f} / {floor:.1f} s = "
              f"{cold / floor:.2f} (goal 4x): {'met' if cold <= 4 * floor else 'NOT met'}")
        again = unchanged_rerun_seconds(lake)
        print(f"samples re-run with nothing new (a fresh `clwl run` process): median {statistics.median(again):.2f} s "
              f"of {len(again)} ({', '.join(f'{s:.2f}' for s in again)}); / floor = "
              f"{statistics.median(again) / floor:.2f}x (goal: under 10 s)")
    shutil.rmtree(root, ignore_errors=True)


def fresh_run_seconds(lake: Path) -> float:
    """`clwl run` on the samples into a new ``lake``, a process of its own (as a user runs it): wall seconds from
    its start to its exit."""
    t = time.perf_counter()
    done = subprocess.run([str(CLWL), "run", "--lake", str(lake)], capture_output=True, text=True, cwd=ROOT,
                          start_new_session=True)
    seconds = time.perf_counter() - t
    if done.returncode != 0 or "published" not in done.stdout:
        raise SystemExit(f"the fresh samples run failed: {done.stdout[-800:]}{done.stderr[-800:]}")
    shutil.rmtree(lake, ignore_errors=True)
    return seconds


def unchanged_rerun_seconds(lake: Path, times: int = 3) -> list[float]:
    """`clwl run` on the samples into ``lake``, which already holds their published run: every date is
    unchanged (clwl/lake/fingerprint.py), so the process ends without starting Spark. Wall seconds of each, from the
    process start."""
    out = []
    for _ in range(times):
        t = time.perf_counter()
        done = subprocess.run([str(CLWL), "run", "--lake", str(lake)], capture_output=True, text=True, cwd=ROOT)
        out.append(time.perf_counter() - t)
        if done.returncode != 0 or "published as is" not in done.stdout:
            raise SystemExit(f"the unchanged re-run did not skip: {done.stdout[-800:]}{done.stderr[-800:]}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--senders", type=int, default=4)
    ap.add_argument("--keep", help="keep the landing folder and lake here")
    ap.add_argument("--lake", help="only the floor and the queries, on this existing lake")
    ap.add_argument("--landing", help="run on this existing landing folder (e.g. one a --keep run left) "
                                      "instead of generating one; --messages and --senders are then ignored")
    ap.add_argument("--samples", action="store_true", help="the bundled samples' clwl run against its own floor")
    ap.add_argument("--repeat", type=int, default=1, help="with --samples: runs (each between two floors)")
    ap.add_argument("--trace", action="store_true",
                    help="the same estate as puts.csv and as activity trace, the pipeline on each (issue 16)")
    ap.add_argument("--channel-trace", action="store_true",
                    help="the same estate without and with the channel agents' trace at both ends (amqsact, then "
                         "amqsevt JSON), the pipeline on each (issue 29)")
    a = ap.parse_args()
    if a.samples:
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; python "
              f"{sys.version.split()[0]}")
        samples_run(a.repeat)
        return

    from spark.config import PipelineConfig
    from spark.session import get_spark

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}")
    if a.lake:
        lake = Path(a.lake)
        config = PipelineConfig.from_env(lake=lake, landing=lake.parent / "landing")
        spark = get_spark(config.master)
        print(f"  floor: bare read + Delta write of silver.message_events, median of 3: "
              f"{floor_seconds(spark, config, Path(tempfile.mkdtemp(prefix='clwl-floor-'))):.1f} s")
        from clwl.lake.door import Lake

        query_latency(lake, max(Lake(lake).published().dates, default="2026-11-20"))
        return

    root = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="clwl-bench-"))
    if a.trace:
        traced_estate(a, root)
    elif a.channel_trace:
        channel_traced_estate(a, root)
    else:
        landing = Path(a.landing) if a.landing else root / "landing"
        if not a.landing:
            generate_estate(a, landing, "csv")
        spark = get_spark(PipelineConfig.from_env().master)
        config, outcome, peak = run_estate(spark, landing, root / "lake")
        d = outcome.dates[0]
        warm_replay, floor = warm_replay_and_floor(spark, config, root, d.run_date)
        print_stages(outcome.seconds, floor)
        replay = outcome.seconds.get("replay", float("nan"))
        print(f"{'replay':<10} {warm_replay:8.1f} {warm_replay / floor:8.2f}   the replay stage again, warm, median "
              "of 3 (taken alternately with the floor)")
        print(f"replay / floor = {replay / floor:.2f}x in the pipeline, {warm_replay / floor:.2f}x warm (goal 2x); "
              f"{d.messages / replay:,.0f} messages/s replayed")
        print_targets(d.messages, outcome.seconds, floor)
        print_memory(peak)
        query_latency(root / "lake", d.run_date)
    if not a.keep:
        shutil.rmtree(root, ignore_errors=True)


def generate_estate(a, landing: Path, puts_format: str, *extra: str) -> None:
    """`clwl generate` one day of a.messages messages (seed fixed: the same estate in either format); ``extra``:
    more options (the channel agents' trace)."""
    from clwl.cli import main as generate

    t = time.perf_counter()
    generate(["generate", "--out", str(landing), "--days", "1", "--messages-per-day", str(a.messages),
              "--senders", str(a.senders), "--qmgrs", str(6 + 2 * a.senders), "--puts-format", puts_format,
              "--force", "--quiet", *extra])
    size = sum(f.stat().st_size for f in landing.rglob("*") if f.is_file())
    print(f"generated {a.messages:,} messages ({' '.join((puts_format,) + extra)}) in {time.perf_counter() - t:.1f} s "
          f"into {landing}: {size / 2**20:,.0f} MiB")


def run_estate(spark, landing: Path, lake: Path):
    """The whole pipeline on one landing folder into a new lake, peak memory sampled: (config, outcome, peak)."""
    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline

    shutil.rmtree(lake, ignore_errors=True)
    config = PipelineConfig.from_env(lake=lake, landing=landing)
    with PeakMemory() as peak:
        outcome = run_pipeline(config, spark=spark, progress=peak.progress)
    d = outcome.dates[0]
    print(f"clwl run: {'published' if d.published else 'BLOCKED'}; {d.messages:,} messages, {d.stuck} stuck, "
          f"{d.unexpected} unexpected distribution rows")
    return config, outcome, peak


FLOOR = "bare read + Delta write of silver.message_events, median of 3"


def print_stages(seconds: dict[str, float], floor: float, floor_is: str = FLOOR) -> None:
    """Each stage's seconds and its ratio to the floor, then the floor and what it measured."""
    print(f"{'stage':<10} {'seconds':>8} {'x floor':>8}")
    for stage, secs in seconds.items():
        print(f"{stage:<10} {secs:8.1f} {secs / floor:8.2f}")
    print(f"{'floor':<10} {floor:8.1f} {1:8.2f}   {floor_is}")


def targets(messages: int, seconds: dict[str, float], floor: float) -> list[tuple[str, float, str, bool]]:
    """Issue 45's targets this run measures: (what, figure, goal, met). The whole run against its floor: within
    10x up to 2M messages a day, within 6x above; at 10M and over, the report under 15 s."""
    whole = seconds["total"] / floor
    goal = 10 if messages <= 2_000_000 else 6
    out = [(f"whole run / floor at {messages:,} messages", whole, f"{goal}x", whole <= goal)]
    if messages >= 10_000_000 and "report" in seconds:
        out.append(("report seconds", seconds["report"], "15 s", seconds["report"] < 15))
    return out


def print_targets(messages: int, seconds: dict[str, float], floor: float) -> None:
    for what, figure, goal, met in targets(messages, seconds, floor):
        print(f"target: {what} = {figure:.2f} (goal {goal}): {'met' if met else 'NOT met'}")


def print_memory(peak: PeakMemory) -> None:
    import psutil

    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"memory peaks: driver JVM {mib(peak.jvm)} (RSS); Python workers together {mib(peak.workers)} (PSS); "
          f"driver Python {mib(me)} (RSS)")
    print("  per stage (JVM / Python workers): " + "; ".join(
        f"{stage} {mib(j)} / {mib(w)}" for stage, (j, w) in peak.by_stage.items()))
    # Issue 18: no stage above half the machine's memory. A stage's figure: its JVM and workers' peaks, plus the
    # driver Python's peak of the whole run (an upper bound: the three peaks need not coincide).
    stage, (j, w) = max(peak.by_stage.items(), key=lambda kv: sum(kv[1]))
    total = psutil.virtual_memory().total
    print(f"  largest stage: {stage}, {mib(j + w + me)} with the driver Python = {(j + w + me) / total:.0%} of the "
          f"machine's {mib(total)} (goal: under 50%)")


def traced_estate(a, root: Path) -> None:
    """Issue 16's scale check: the same estate (same seed) as puts.csv and as amqsact activity trace, the whole
    pipeline on each in one Spark session, CSV first; the traced ingest per message against the CSV's (goal 2x),
    the trace's parse rate, and each whole run against the floor (read + write of that run's message events)."""
    from spark.config import PipelineConfig
    from spark.session import get_spark

    runs = {}
    for fmt in ("csv", "activity-trace"):
        landing = root / f"landing-{fmt}"
        if not (a.keep and landing.is_dir()):
            generate_estate(a, landing, fmt)
        spark = get_spark(PipelineConfig.from_env().master)
        config, outcome, peak = run_estate(spark, landing, root / f"lake-{fmt}")
        floor = floor_seconds(spark, config, root)
        print(f"--- {fmt}")
        print_stages(outcome.seconds, floor)
        print_memory(peak)
        runs[fmt] = (outcome, peak, floor)
    (csv_o, _, csv_floor), (tr_o, tr_peak, tr_floor) = runs["csv"], runs["activity-trace"]
    csv_n, tr_n = csv_o.dates[0].messages, tr_o.dates[0].messages
    per_csv, per_tr = csv_o.seconds["ingest"] / csv_n, tr_o.seconds["ingest"] / tr_n
    print(f"ingest per message: csv {per_csv * 1e6:.1f} us ({csv_n:,} messages), activity trace {per_tr * 1e6:.1f} us "
          f"({tr_n:,} traced puts): trace / csv = {per_tr / per_csv:.2f}x (goal 2x)")
    print(f"activity trace parse: {tr_peak.parse_records:,} records (MQI operations and captures) in "
          f"{tr_peak.parse_seconds:.1f} s wall = {tr_peak.parse_records / tr_peak.parse_seconds:,.0f} records/s, "
          f"{tr_n / tr_peak.parse_seconds:,.0f} traced puts/s on {os.cpu_count()} cores")
    print(f"whole run / floor: csv {csv_o.seconds['total'] / csv_floor:.2f}x, activity trace "
          f"{tr_o.seconds['total'] / tr_floor:.2f}x")


CHANNEL_TRACE_RUNS = (("csv", ()), ("amqsact", ("--channel-trace", "--channel-trace-ends", "both")),
                      ("json", ("--channel-trace", "--channel-trace-ends", "both", "--trace-format", "json")))


def channel_traced_estate(a, root: Path) -> None:
    """Issue 29's cost: the same estate (same seed, puts.csv) without and with the channel agents' trace at both
    ends (every message's MQGET on the sending side and MQPUT on the receiving side), as amqsact and as amqsevt
    JSON, the whole pipeline on each in one Spark session; the ingest per message of each against the CSV's, the
    parse step's seconds and rate, and what the traces add per traced message."""
    import json

    from spark.config import PipelineConfig
    from spark.session import get_spark

    runs = {}
    for name, extra in CHANNEL_TRACE_RUNS:
        landing = root / f"landing-channels-{name}"
        if not (a.keep and landing.is_dir()):
            generate_estate(a, landing, "csv", *extra)
        traced = json.loads((landing / "_generate.json").read_text()).get("channel_trace", {})
        size = sum((landing / f).stat().st_size for f in traced.get("files", ()))
        spark = get_spark(PipelineConfig.from_env().master)
        _config, outcome, peak = run_estate(spark, landing, root / f"lake-channels-{name}")
        print(f"--- {name}: {traced.get('departures', 0):,} departures and {traced.get('arrivals', 0):,} arrivals "
              f"traced, {size / 2**20:,.0f} MiB of trace")
        print_stages(outcome.seconds, float("nan"), "not taken")
        runs[name] = (outcome, peak, traced.get("departures", 0), size)
    csv_o, csv_peak, _, _ = runs["csv"]
    n = csv_o.dates[0].messages
    per_csv = csv_o.seconds["ingest"] / n
    print(f"ingest per message: csv {per_csv * 1e6:.1f} us ({n:,} messages); parse step {csv_peak.parse_seconds:.1f} s, "
          f"{csv_peak.parse_records:,} records")
    for name in ("amqsact", "json"):
        o, peak, traced, size = runs[name]
        per = o.seconds["ingest"] / n
        extra = o.seconds["ingest"] - csv_o.seconds["ingest"]
        parse_extra = peak.parse_seconds - csv_peak.parse_seconds
        print(f"channel trace {name}: ingest per message {per * 1e6:.1f} us = {per / per_csv:.2f}x csv; "
              f"+{extra / max(traced, 1) * 1e6:.1f} us per traced message ({traced:,}, {size / max(traced, 1):,.0f} "
              f"bytes of trace each); parse step {peak.parse_seconds:.1f} s, {peak.parse_records:,} records = "
              f"{peak.parse_records / peak.parse_seconds:,.0f} records/s; the trace's share "
              f"{parse_extra:.1f} s = {traced / max(parse_extra, 1e-9):,.0f} traced messages/s "
              f"(both ends) on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
