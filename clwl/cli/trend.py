"""``clwl trend [--lake LAKE] [--days N] [--until D] [--window N] [--min-days N] [--threshold Z] [--json]``: the
published days' numbers across days, each day that departs from its trailing window flagged with its cause.

The work is clwl/analyses/trend.py (gold.trend_facts at its published version, through the lake's door; no JVM);
this module prints it: per series a compact history and its flags, or with --json the list of flags
(docs/trends.md, docs/cli-contract.md).
"""

from __future__ import annotations

import argparse
import sys

from clwl.cli.argtypes import positive_number, whole_number
from clwl.cli.options import LAKE_LOCATION
from clwl.cli.task import LakeTask


def add_trend_command(subparsers) -> argparse.ArgumentParser:
    from clwl.analyses.trend import DEFAULT_DAYS, DEFAULT_MIN_DAYS, DEFAULT_THRESHOLD, DEFAULT_WINDOW
    from clwl.cli.argtypes import run_date

    t = subparsers.add_parser(
        "trend", help="the published days across days: departures flagged with their cause (no JVM)",
        description="The last published run dates of the lake: per share, channel, rule and the trace agreement, "
                    "a compact history, and a flag for every day whose value departs from the previous published "
                    "days (|z| >= 3 against 14 days, at least 7 of them), with its cause: a configuration change "
                    "(drift), an incident, an application that changed how it opens the queue, an evidence gap, or "
                    "unexplained. See docs/trends.md.",
        epilog="example: clwl trend --lake lake --days 30 --json")
    LAKE_LOCATION.add(t)
    t.add_argument("--days", type=whole_number(1), default=DEFAULT_DAYS, metavar="N",
                   help=f"the published run dates to show, the latest last (default {DEFAULT_DAYS})")
    t.add_argument("--until", type=run_date, metavar="YYYY-MM-DD",
                   help="the last run date to show (default: the latest published)")
    t.add_argument("--window", type=whole_number(1), default=DEFAULT_WINDOW, metavar="N",
                   help=f"published days a day is compared with (default {DEFAULT_WINDOW})")
    t.add_argument("--min-days", type=whole_number(1), default=DEFAULT_MIN_DAYS, metavar="N",
                   help=f"days of the window that must have a value to flag a day (default {DEFAULT_MIN_DAYS})")
    t.add_argument("--threshold", type=positive_number, default=DEFAULT_THRESHOLD, metavar="Z",
                   help=f"|z| at which a day is flagged (default {DEFAULT_THRESHOLD:g})")
    t.add_argument("--json", action="store_true",
                   help="one JSON object: the dates shown, the rule, and the flags (date, metric, subject labels, "
                        "value, baseline_mean, baseline_std, z, cause)")
    t.set_defaults(func=TrendTask.main)
    return t


class TrendTask(LakeTask):
    """The runner's steps (clwl.cli.task): the lake as every lake-reading command finds it, the trend, then the
    printing."""

    command = "trend"
    json_indent = 2

    def failures(self) -> tuple[type[BaseException], ...]:
        from clwl.analyses.trend import TrendError

        return (TrendError,)

    def check(self) -> None:
        from clwl.cli.task import TaskError

        if self.args.min_days > self.args.window:
            raise TaskError(f"--min-days {self.args.min_days} is more than --window {self.args.window}")

    def compute(self):
        from clwl.analyses.trend import trend

        return trend(self.lake, self.args.days, self.args.until, window=self.args.window,
                     min_days=self.args.min_days, threshold=self.args.threshold)

    def json_document(self, found) -> dict:
        return {"dates": found.dates, "window": found.window, "min_days": found.min_days,
                "threshold": found.threshold, "flags": [f.as_dict() for f in found.flags]}

    def render_text(self, found) -> None:
        from clwl.analyses.trend import flag_text, sparkline, value_text
        from clwl.terminal import say

        out = sys.stdout
        say(f"{len(found.dates)} published day(s), {found.dates[0]} to {found.dates[-1]}: a day is flagged when "
            f"|z| >= {found.threshold:g} against the previous {found.window} published days (at least "
            f"{found.min_days} of them); {len(found.flags)} flag(s)", out)
        flagged: dict = {}
        for f in found.flags:
            flagged.setdefault((f.metric, f.subject), []).append(f)
        steady = 0
        for s in found.series:
            values = [s.values.get(d) for d in found.dates]
            present = [v for v in values if v is not None]
            flags = flagged.get((s.metric, s.subject), [])
            if not present or (not flags and min(present) == max(present)):
                steady += 1
                continue
            lo, hi = min(present), max(present)
            say("", out)  # say() shows a newline inside a line as \n: a blank line is its own call
            say(f"{s.metric}  {s.subject.text(s.metric)}", out)
            say(f"  {sparkline(values)}  {value_text(s.metric, lo)} to {value_text(s.metric, hi)}, last "
                f"{value_text(s.metric, present[-1])}", out)
            for f in flags:
                say(f"  ! {f.date}  {flag_text(f)}", out)
        if steady:
            say("", out)
            say(f"{steady} other series steady over the days shown (no flag)", out)
