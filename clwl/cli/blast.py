"""``clwl blast --date D [--lake LAKE] [--algorithm PROFILE] [--json]``: the estate's single points of failure.

For each queue manager and each cluster-sender channel of the day, the day's own traffic is replayed with it
stopped for the busiest hour (clwl/analyses/blast.py, in-process: deltalake, pyarrow and the engine, no JVM), and the
messages that would have been stuck, and why, are set against those that would simply have gone elsewhere.
docs/blast.md explains the answer and its limits.
"""

from __future__ import annotations

import argparse
import sys

from clwl.cli.options import DATE, LAKE_LOCATION, aligned
from clwl.cli.task import LakeTask
from clwl.engine.algorithm import PROFILES
from clwl.terminal import printable


def add_blast_command(subparsers) -> argparse.ArgumentParser:
    b = subparsers.add_parser(
        "blast", help="what one hour of each queue manager or channel stopped would have stuck (no JVM)",
        description="The blast radius of a day: for each queue manager (every sender's channels to it) and each "
                    "cluster-sender channel, the day's own messages are replayed with it STOPPED for the day's "
                    "busiest hour (UTC), against the day as it was. Stuck: messages that would have waited behind "
                    "it and stayed (bound on open, a group in logical order, a named queue manager, the only "
                    "instance, ...); went elsewhere: messages the day sent over it that would have gone over "
                    "another channel. Sorted by messages stuck: the estate's single points of failure. "
                    "See docs/blast.md.",
        epilog="example: clwl blast --date 2026-11-20 --lake lake")
    LAKE_LOCATION.add(b)
    DATE.add(b, help="the run date to examine (required)")
    b.add_argument("--algorithm", choices=sorted(PROFILES), default="default", metavar="PROFILE",
                   help="algorithm profile of the replays: " + ", ".join(sorted(PROFILES)) + " (default: default)")
    b.add_argument("--json", action="store_true", help="one JSON object")
    b.set_defaults(func=BlastTask.main)
    return b


class BlastTask(LakeTask):
    command = "blast"
    date_required = "--date is required: the run date to examine (YYYY-MM-DD)"

    def failures(self):
        from clwl.analyses.blast import BlastError

        return (BlastError,)

    def compute(self):
        from clwl.analyses.blast import blast_radius

        return blast_radius(self.lake, self.date, self.args.algorithm)

    def json_document(self, radius) -> dict:
        return radius.to_json()

    def render_text(self, radius) -> None:
        write_readable(radius)


def write_readable(radius) -> None:
    from clwl.analyses.blast import REASON_WORDS, case_counts, case_label, table_rows, top

    out: list[str] = []  # one line each, escaped when written: queue, channel and application names are the lake's
    w = out.append
    win = radius.window
    w(f"Blast radius of {radius.run_date}: each queue manager and cluster-sender channel STOPPED for the busiest "
      f"hour, {win.label} UTC")
    w(f"({win.messages} of the day's {radius.messages} messages were put then), the day's own traffic replayed "
      f"against the day as it was.")
    w(f"{case_counts(radius)}.")
    w("")
    rows = table_rows(radius)
    if len(rows) == 1:
        w("Nothing would have been stuck or moved: no message put in that hour went over a cluster channel.")
    else:
        out.extend(aligned(rows, right={2, 3}))
    quiet = [r for r in radius.cases if not (r.stuck or r.reallocated)]
    if quiet:
        names = ", ".join(case_label(r) + (f" of {r.case.sender}" if r.case.sender else "") for r in quiet)
        w("")
        w(f"Nothing stuck, nothing moved: {names}.")
    stuck = [r for r in radius.cases if r.stuck]
    if stuck:
        w("")
        w("Where the stuck messages were:")
        for r in stuck:
            who = case_label(r) + (f" of {r.case.sender}" if r.case.sender else "")
            w(f"  {who}: queues {top(r.queues, 'stuck')}; applications {top(r.applications, 'stuck')}")
        seen = sorted({k for r in stuck for k in r.by_reason if r.by_reason[k]},
                      key=lambda k: list(REASON_WORDS).index(k))
        w("")
        w("Stuck because:")
        for k in seen:
            w(f"  {k}: {REASON_WORDS[k]}")
    w("")
    w(f"({len(radius.senders)} sender(s) replayed in-process in "
      f"{radius.seconds.get('total', sum(radius.seconds.values())):.2f} s; --json for every queue and application)")
    sys.stdout.write("".join(printable(line) + "\n" for line in out))
