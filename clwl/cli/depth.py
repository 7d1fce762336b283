"""``clwl depth [--lake L] --queue Q [--qmgr QM] [--date D] [--threshold N] [--json]``: one queue's depth on a
published run date, rebuilt from the activity trace: per queue manager its peak, the time at or above a threshold,
the oldest message's age and who put it, beside the captured CURDEPTH samples (what sampling saw), with every
difference and evidence gap named.

The work is clwl/analyses/depth_day.py (gold.queue_depth at its published version, through the lake's door; no
JVM); this module prints it (docs/depth.md, docs/cli-contract.md).
"""

from __future__ import annotations

import argparse
import sys

from clwl.cli.argtypes import whole_number
from clwl.cli.options import LAKE_LOCATION
from clwl.cli.task import LakeTask


def add_depth_command(subparsers) -> argparse.ArgumentParser:
    from clwl.cli.argtypes import run_date

    d = subparsers.add_parser(
        "depth", help="a queue's depth and oldest message over a published day, from the trace (no JVM)",
        description="One queue's depth on a published run date, rebuilt from the activity trace at every change "
                    "(gold.queue_depth): per queue manager the peak, the time at or above a threshold (default: the "
                    "queue's QDEPTHHI percent of its MAXDEPTH, as MQ's queue depth high event), the oldest "
                    "message's age and the application that put it, the captured CURDEPTH samples beside it, each "
                    "difference with its likely cause, and the evidence gap where the trace is missing. "
                    "See docs/depth.md.",
        epilog="example: clwl depth --lake lake --queue APP.PAYMENTS --date 2026-11-20")
    LAKE_LOCATION.add(d)
    d.add_argument("--queue", required=True, metavar="Q", help="the queue (an instance's name, or a transmission "
                                                                "queue)")
    d.add_argument("--qmgr", metavar="QM", help="only this queue manager's instance (default: every one)")
    d.add_argument("--date", type=run_date, metavar="YYYY-MM-DD", help="the run date (default: the latest published)")
    d.add_argument("--threshold", type=whole_number(1), metavar="N",
                   help="the depth whose time at or above is counted (default: QDEPTHHI percent of MAXDEPTH, from "
                        "the day's QLOCAL capture of the queue)")
    d.add_argument("--json", action="store_true",
                   help="one JSON object: date, queue, lines (per queue manager: peak, peak_at, threshold, "
                        "seconds_at_or_above, oldest_age_seconds, oldest_put_by, basis, samples, differences) and "
                        "gaps")
    d.set_defaults(func=DepthTask.main)
    return d


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{seconds:.3f}s"


class DepthTask(LakeTask):
    """The runner's steps (clwl.cli.task): the lake as every lake-reading command finds it, the queue's report,
    then the printing."""

    command = "depth"
    json_indent = 2

    def failures(self) -> tuple[type[BaseException], ...]:
        from clwl.analyses.depth_day import DepthError

        return (DepthError,)

    def compute(self):
        from clwl.analyses.depth_day import queue_report

        a = self.args
        return queue_report(self.lake, a.queue, a.qmgr, self.date, a.threshold)

    def json_document(self, found) -> dict:
        return {"date": found.date, "queue": found.queue, "lines": [x.as_dict() for x in found.lines],
                "gaps": [{"qmgr": g.qmgr, "queue": g.queue, "reason": g.reason} for g in found.gaps]}

    def render_text(self, found) -> None:
        from clwl.terminal import say

        out = sys.stdout
        say(f"{found.queue} on {found.date}: {len(found.lines)} queue manager(s) with a depth line"
            + (f", {len(found.gaps)} evidence gap(s)" if found.gaps else ""), out)
        for x in found.lines:
            say("", out)
            say(f"{x.qmgr}  {x.changes} change(s), depth {x.start} at the start, {x.end} at the end", out)
            peak_at = x.peak_at.strftime("%H:%M:%S.%f")[:-3] if x.peak_at else "the start"
            sampled = max((n for _, n in x.samples), default=None)
            say(f"  peak {x.peak} at {peak_at}; the captures saw "
                + (f"at most {sampled} in {len(x.samples)} sample(s)" if x.samples else "no sample"), out)
            if x.threshold is None:
                say(f"  time at or above a threshold: none ({x.threshold_source})", out)
            else:
                say(f"  at or above {x.threshold} ({x.threshold_source}): {_duration(x.seconds_at_or_above or 0)}",
                    out)
            if x.oldest_age_seconds is not None:
                when = (x.oldest_at.strftime("%H:%M:%S") if x.oldest_at.date().isoformat() == found.date
                        else "the day's end")
                say(f"  oldest message: {_duration(x.oldest_age_seconds)} old at {when}, "
                    f"{x.oldest_msg_id or 'id unknown'}, put by "
                    f"{x.oldest_put_by or 'an application not traced'} ({', '.join(x.basis) or 'exact'})", out)
            for dif in x.differences:
                say(f"  ! {dif.at.strftime('%H:%M:%S')} {dif.measure} captured {dif.captured}, rebuilt "
                    f"{dif.rebuilt}: {dif.cause}", out)
        for g in found.gaps:
            say("", out)
            say(f"gap  {g.qmgr}: {g.reason}", out)
