"""Replay loop benchmark, no Spark: the fast path against the reference path on a generated estate.

    .venv/bin/python bench/replay.py [--messages 400000] [--runs 3]

`clwl generate` writes a one-day estate; each sender's captures become its configuration timeline and its put
records its events (as tests/unit/test_replay_batch.py does). Then, per sender, in one process:
- reference: SenderReplay.put, one PutEvent in and one ReplayRow out per message (the path the documented
  behaviour tests pin down, and the Spark replay's `reference=True`);
- fast: SenderReplay.put_batch over columns in batches of 10,000 (what the Spark replay's mapInArrow runs),
  one result index per message.
Prints messages/s of each, median of --runs, and the ratio; the routing engine alone (Router.route_many on one
queue) is printed as the ceiling.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

BATCH = 10_000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=400_000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()

    from test_replay_batch import _events, _micros, _timeline

    from clwl.engine.algorithm import Request
    from clwl.engine.replay import SenderReplay, replay
    from clwl.engine.router import Router
    from clwl.generate import GenerateOptions, generate

    root = Path(tempfile.mkdtemp(prefix="clwl-bench-replay-"))
    generate(GenerateOptions(out=str(root), quiet=True, seed=1, days=1, messages_per_day=a.messages))
    day = next(p for p in sorted(root.iterdir()) if p.is_dir())
    until = datetime.fromisoformat(day.name).replace(tzinfo=timezone.utc) + timedelta(days=1)
    senders = []
    for qm in sorted(p.name for p in day.iterdir() if p.is_dir()):
        events = _events(day, qm)
        if events:
            senders.append((qm, _timeline(day, qm), events))
    n = sum(len(e) for _, _, e in senders)
    print(f"{n:,} messages from {len(senders)} senders ({root})")

    def reference() -> int:
        return sum(sum(1 for _ in replay(qm, tl, events, until=until)) for qm, tl, events in senders)

    columns = []
    for qm, tl, events in senders:
        cols = [([_micros(e.put_time) for e in chunk], [e.queue for e in chunk], [e.target_qmgr for e in chunk],
                 [e.bind for e in chunk], [e.open_handle for e in chunk], [e.group_id for e in chunk],
                 [e.logical_order for e in chunk], [e.from_cluster_channel for e in chunk], [e.pcf for e in chunk],
                 [e.length for e in chunk], chunk.__getitem__)
                for chunk in (events[i:i + BATCH] for i in range(0, len(events), BATCH))]
        columns.append((qm, tl, cols))

    def fast() -> int:
        done = 0
        for qm, tl, cols in columns:
            rep = SenderReplay(qm, tl)
            for c in cols:
                codes, rows = rep.put_batch(c[:10], c[10])
                done += sum(1 for x in codes if x >= 0) + len(rows)
            done += sum(1 for _ in rep.finish(until))
        return done

    qm, tl, _ = senders[0]
    queue = next(i.queue for i in tl[0].view.instances if not i.local)

    def engine() -> int:
        return len(Router(tl[0].view).route_many(Request(queue), n))

    rates = {}
    for name, fn in (("reference path (put, a row per message)", reference),
                     ("fast path (put_batch, columns)", fast), ("engine alone (route_many, one queue)", engine)):
        times = []
        for _ in range(a.runs):
            t = time.perf_counter()
            got = fn()
            times.append(time.perf_counter() - t)
            assert got == n, (name, got, n)
        rates[name] = n / statistics.median(times)
        print(f"  {name:<42} {rates[name]:>12,.0f} msg/s  (median of {a.runs})")
    ref, fst = rates["reference path (put, a row per message)"], rates["fast path (put_batch, columns)"]
    print(f"  fast / reference = {fst / ref:.1f}x")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
