"""Engine benchmark: messages per second of the fast path and of the explaining (reference) path.

    .venv/bin/python bench/engine.py [--messages 1000000] [--repeats 5]

Routes not-fixed messages to a cluster queue with 10 and with 100 instances (mixed CLWLWGHT, all
channels RUNNING, the default profile). Prints the median of several runs and, as baselines measured in
the same run, a bare Python loop over the same number of items (the floor for any per-message Python
code) and the explaining path. One core: the engine is single-threaded.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clwl.engine.algorithm import Request  # noqa: E402
from clwl.engine.model import ClusterChannel, ClusterView, QmgrAttributes, QueueInstance  # noqa: E402
from clwl.engine.router import Router  # noqa: E402


def make_view(n: int) -> ClusterView:
    cl = frozenset({"CL1"})
    chans = tuple(ClusterChannel(f"TO.QM{i:03d}", f"QM{i:03d}", cl, clwlwght=20 + (i % 7) * 10, state="RUNNING")
                  for i in range(1, n + 1))
    inst = tuple(QueueInstance("APP.ORDERS", c.qmgr, cl, defbind="NOTFIXED") for c in chans)
    recv = (ClusterChannel("TO.QM000", "QM000", cl, deftype="CLUSRCVR"),)
    return ClusterView(QmgrAttributes("QM000"), chans, inst, local_receivers=recv)


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--explain-messages", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    req = Request("APP.ORDERS")
    n = a.messages
    print(f"clwl engine benchmark: {n:,} messages, median of {a.repeats} runs, "
          f"Python {platform.python_version()} on {platform.machine()}")

    def floor():
        s = 0
        for i in range(n):
            s += i
    base = statistics.median(timed(floor) for _ in range(a.repeats))
    print(f"  baseline: bare Python loop over {n:,} items: {n / base / 1e6:.2f} M items/s")

    for dests in (10, 100):
        view = make_view(dests)
        fast_many = statistics.median(timed(lambda: Router(view).route_many(req, n)) for _ in range(a.repeats))

        def per_message():
            r = Router(view)
            route = r.route
            for _ in range(n):
                route(req)
        fast_one = statistics.median(timed(per_message) for _ in range(a.repeats))
        m = max(200, a.explain_messages // (dests // 10))

        def explaining():
            r = Router(view)
            for _ in range(m):
                r.route(req, explain=True)
        expl = statistics.median(timed(explaining) for _ in range(a.repeats))
        rate_many, rate_one, rate_expl = n / fast_many, n / fast_one, m / expl
        print(f"  {dests:>3} destinations:")
        print(f"      fast path, route_many   {rate_many / 1e6:6.2f} M msg/s  "
              f"({rate_many / (n / base):.2f}x the bare loop)")
        print(f"      fast path, route()      {rate_one / 1e6:6.2f} M msg/s")
        print(f"      explaining path         {rate_expl / 1e3:6.2f} k msg/s  ({m:,} messages)  "
              f"fast/explaining = {rate_many / rate_expl:.0f}x")


if __name__ == "__main__":
    main()
