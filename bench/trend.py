"""How long `clwl trend` takes over 30 published days (issue 42: under 3 s for 30 days at 1M messages a day).

    python bench/trend.py [--days 30] [--source-messages 20000] [--keep DIR]
    python bench/trend.py --lake DIR/lake     # the timings again, on the lake a --keep run laid down

What `clwl trend` reads is gold.trend_facts: one row per day, metric and subject (a queue instance and sender, a
sender and channel, a rule, a side). Its size follows the estate's shape, not the message volume: a day of 1M
messages and a day of 20,000 on the same estate have the same subjects. So the bench runs the pipeline once on
one day of the 1M benchmark's estate shape (bench/pipeline.py: 4 senders, 14 queue managers) at
``--source-messages``, takes that day's trend facts, and lays them down as ``--days`` + 14 published days (the
trailing window is read too) in a new lake, each day's values moved by a small fixed-seed noise so the windows
have a spread. Then it times, median of 3, each in a new process:

- baseline: a Python process that imports the lake door and reads gold.trend_facts (the floor of any answer);
- `clwl trend --lake L --days N --json`.

It prints both, their ratio, the rows read, and whether the issue's 3 s is met.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLWL = [sys.executable, "-m", "clwl"]
WINDOW = 14  # clwl trend's default trailing window: read before the first date shown
ESTATE = ["--senders", "4", "--qmgrs", "14"]  # bench/pipeline.py's 1M estate (qmgrs = 6 + 2 * senders)


def _run(cmd: list[str]) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    took = time.perf_counter() - t
    if done.returncode not in (0, 1):  # clwl trend exits 1 when it flags a departure
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stdout[-600:]}{done.stderr[-600:]}")
    return took


def source_day(root: Path, messages: int) -> tuple[object, str]:
    """One generated day of the 1M estate's shape, through `clwl run`: its gold.trend_facts rows and date."""
    from clwl.lake.door import Lake

    landing, lake = root / "landing", root / "source-lake"
    t = time.perf_counter()
    subprocess.run(CLWL + ["generate", "--out", str(landing), "--days", "1", "--messages-per-day", str(messages),
                           *ESTATE, "--force", "--quiet"], check=True, cwd=ROOT)
    done = subprocess.run(CLWL + ["run", "--landing", str(landing), "--lake", str(lake)], capture_output=True,
                          text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"clwl run failed: {done.stdout[-800:]}{done.stderr[-800:]}")
    lk = Lake(lake)
    day = max(lk.published().dates)
    table = lk.rows("gold.trend_facts")
    rows = table.to_pylist()
    print(f"source: one day of {messages:,} messages ({' '.join(ESTATE)}) generated and run in "
          f"{time.perf_counter() - t:.0f} s: {len(rows):,} trend-fact rows on {day}")
    return table, day


def lay_down(source, last: str, days: int, lake: Path) -> int:
    """``days`` published days ending on ``last``, each a copy of the source day's rows with its values moved by up to 3 %
    (seeded), written as gold.trend_facts and published through the product's own pointer writer."""
    import pyarrow as pa
    from deltalake import write_deltalake

    from clwl.lake.published import write_published

    rows = source.to_pylist()
    rnd = random.Random(42)
    end = dt.date.fromisoformat(last)
    out = []
    for k in range(days):
        d = end - dt.timedelta(days=days - 1 - k)
        for r in rows:
            v = float(r["value"])
            out.append({**r, "run_date": d, "value": max(0.0, v * (1 + rnd.uniform(-0.03, 0.03)))})
    table = pa.Table.from_pylist(out, schema=source.schema)
    path = lake / "gold" / "trend_facts"
    write_deltalake(str(path), table, partition_by=["run_date"], mode="overwrite")
    dates = {(end - dt.timedelta(days=i)).isoformat(): f"bench-{i}" for i in range(days)}
    write_published(lake / "gold", {"trend_facts": 0}, dates)
    return len(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--source-messages", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", help="keep the lakes here")
    ap.add_argument("--lake", help="only the timings, on the laid-down lake of an earlier --keep run (DIR/lake)")
    a = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}")
    root = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="clwl-bench-trend-"))
    if a.lake:
        lake = Path(a.lake)
    else:
        source, last = source_day(root, a.source_messages)
        lake = root / "lake"
        shutil.rmtree(lake, ignore_errors=True)
        total = lay_down(source, last, a.days + WINDOW, lake)
        print(f"lake: {a.days + WINDOW} published days ({a.days} shown + {WINDOW} of window), {total:,} rows")
    floor_code = ("from clwl.lake.door import Lake; "
                  f"print(Lake({str(lake)!r}).rows('gold.trend_facts').num_rows)")
    floor, trend = [], []
    for _ in range(a.repeat):  # alternately, so a change in the machine's load falls on both
        floor.append(_run([sys.executable, "-c", floor_code]))
        trend.append(_run(CLWL + ["trend", "--lake", str(lake), "--days", str(a.days), "--json"]))
    f, t = statistics.median(floor), statistics.median(trend)
    print(f"{'floor':<8} {f:6.2f} s  a new process importing the lake door and reading gold.trend_facts "
          f"(median of {a.repeat})")
    print(f"{'trend':<8} {t:6.2f} s  clwl trend --days {a.days} --json (median of {a.repeat}): {t / f:.2f}x the "
          f"floor; goal under 3 s: {'met' if t < 3 else 'NOT met'}")
    if not a.keep and not a.lake:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
