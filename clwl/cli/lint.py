"""``clwl lint (--mqsc PATH ... [--at TIME] | --lake LAKE --date D) [--json]``: configuration findings from the
captures, once per object, a default weighed by the day's messages where they are known (the rules are
clwl/analyses/lint.py's, docs/lint.md says what each means).

Exit 0 when the lint ran, whether it found something or not (a finding is advice, not a failure); 2 when the
input cannot be used: a missing folder, no captures, a date the lake does not hold, both or neither of --mqsc
and --lake.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from datetime import time as dtime
from pathlib import Path
from typing import Optional, Sequence

from clwl.cli.options import AT, DATE, LAKE_LOCATION, report_captures
from clwl.cli.task import LakeTask, TaskError
from clwl.terminal import printable, say

WRAP = 110  # readable lines: detail and remedy wrapped under the rule name


def add_lint_command(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "lint", help="configuration findings from the captures (no JVM)",
        description="Findings from the captured configuration: what MQ will do with it that an administrator "
                    "may not expect, once per object, each with the queue manager it belongs to, the object, the "
                    "remedy in MQ's terms, and the observing queue managers that see it. On a landing date or a "
                    "lake, MQ's defaults are a notice where no message of the day went through them. Rules: "
                    + ", ".join(_rule_names()) + " (docs/lint.md).",
        epilog="exit 0 when the lint ran, findings or not; 2 when the input cannot be used. "
               "examples: clwl lint --mqsc samples/landing/2026-11-20/QM1; "
               "clwl lint --lake lake --date 2026-11-20 --json; clwl lint --lake s3://bucket/lake --date 2026-11-20")
    p.add_argument("--mqsc", action="append", metavar="PATH",
                   help="one queue manager's captures: a file, a folder whose files are all read, or a landing "
                        "queue manager folder <landing>/<YYYY-MM-DD>/<QM> (its latest captures); a landing date "
                        "folder gives each of its queue managers (repeatable: captures of the same queue manager "
                        "are read together)")
    AT.add(p, help="with --mqsc, in landing queue manager folders: the latest captures at or before TIME "
                   "(HH:MM[:SS] UTC on the folder's date, or YYYY-MM-DDTHH:MM[:SS])")
    LAKE_LOCATION.add(p, help="lint every queue manager of a run date from the lake, a folder or s3://bucket/prefix "
                              "(with --date); default with --date alone: $CLWL_LAKE, else ./lake")
    DATE.add(p, help="the run date (with --lake): each queue manager's last configuration of the day")
    p.add_argument("--json", action="store_true",
                   help='one JSON document: {"findings": [{"rule", "qmgr", "object", "detail", "remedy"}, ...]}')
    p.set_defaults(func=LintTask.main)
    return p


def _rule_names() -> Sequence[str]:
    from clwl.analyses.lint import RULE_NAMES

    return RULE_NAMES


@dataclass(frozen=True)
class Linted:
    """What one lint found: the findings, what was linted, and where the day's messages were counted from ("" when
    none were known)."""

    findings: list
    source: str
    traffic: str = ""


class LintTask(LakeTask):
    command = "lint"

    def check(self) -> None:
        args = self.args
        if args.mqsc and (args.lake is not None or args.date is not None):
            raise TaskError("give either --mqsc PATH (captures) or --lake LAKE --date YYYY-MM-DD (a run date), not "
                            "both")
        if args.mqsc:
            return
        if args.at is not None:
            raise TaskError("--at chooses among the captures of --mqsc landing folders; none was given")
        if args.date is None:
            raise TaskError("--lake needs --date YYYY-MM-DD" if args.lake is not None else
                            "give --mqsc PATH (captures) or --lake LAKE --date YYYY-MM-DD (a run date)")

    def reads_lake(self) -> bool:
        return not self.args.mqsc

    def failures(self):
        if self.args.mqsc:  # a capture that cannot be read
            from clwl.parse.common import InputError

            return (InputError,)
        from clwl.analyses.lint import LintInputError  # a date the lake does not hold

        return (LintInputError,)

    def compute(self) -> Linted:
        if self.args.mqsc:
            return lint_mqsc(self.args.mqsc, self.args.at)
        from clwl.analyses.lint_lake import lint_lake

        notes: list[str] = []
        findings = lint_lake(self.lake, self.date, notes)
        for note in notes:  # a rejected latest capture: the one before it is linted, as on a landing folder
            say(f"clwl lint: warning: {note}", sys.stderr)
        return Linted(findings, f"{self.lake}, run date {self.date}", f"silver.message_events of {self.date}")

    def json_document(self, linted: Linted) -> dict:
        from clwl.analyses.lint_lake import findings_json

        return findings_json(linted.findings)

    def render_text(self, linted: Linted) -> None:
        write_readable(linted)


def _expand(path: str) -> list[str]:
    """A landing date folder (queue manager folders under a YYYY-MM-DD folder) stands for each of them."""
    from clwl.landing.layout import is_run_date

    p = Path(path)
    if p.is_dir() and is_run_date(p.name):
        subs = sorted(f for f in p.iterdir() if f.is_dir() and not f.name.startswith("."))
        if subs:
            return [str(f) for f in subs]
    return [path]


def _landing_day(paths: Sequence[str]) -> Optional[tuple[Path, str]]:
    """(landing folder, run date) when every path given is a landing date folder or queue manager folder of one
    and the same date: the day whose put files say where messages were put. None otherwise."""
    from clwl.landing.layout import is_run_date

    days = set()
    for given in paths:
        p = Path(given).resolve()
        if p.is_dir() and is_run_date(p.name):
            days.add((p.parent, p.name))
        elif p.is_dir() and is_run_date(p.parent.name):
            days.add((p.parent.parent, p.parent.name))
        else:
            return None
    return days.pop() if len(days) == 1 else None


def _read_qmgr(path: str, at):
    """read_captures of one --mqsc path; in a landing queue manager folder, a latest capture that cannot be read
    is replaced by the one before it (the same kind; the other kind stays the latest), as the lake does (an
    ingest rejects the file and the configuration in force stays the previous capture's). (captures, one line
    per capture replaced)."""
    from clwl.engine.view import (
        CaptureMoment,
        Captures,
        LandingChoice,
        is_landing_qmgr_folder,
        parse_capture_file,
        read_captures,
        select_landing_captures,
    )
    from clwl.parse.common import InputError

    folder = Path(path)
    if not (folder.is_dir() and is_landing_qmgr_folder(folder)):
        return read_captures([path], at), []
    choice = select_landing_captures(folder, at)
    notes: list[str] = []
    chosen, parsed = [], []
    for kind in ("config", "chstatus"):
        group = [c for c in choice.captures if c.kind == kind]
        while group:
            try:
                parsed += [parse_capture_file(c.path) for c in group]
                chosen += group
                break
            except InputError as e:
                first = min(group, key=lambda c: c.key)
                if first.time == dtime(0) or first.day is None or first.day.isoformat() != folder.resolve().parent.name:
                    raise  # a capture carried from an earlier date, or the day's first instant: none before it here
                before = (datetime.combine(first.day, first.time) - timedelta(seconds=1)).time()
                try:
                    earlier = select_landing_captures(folder, CaptureMoment(before, None, before.isoformat()))
                except InputError:
                    raise e from None
                if [c.key for c in earlier.captures if c.kind == kind] == [c.key for c in group]:
                    raise
                group = [c for c in earlier.captures if c.kind == kind]
                used = ", ".join(c.path.name for c in group) if group else "none"
                notes.append(f"{e}: the {kind} capture before it is used instead ({used}), as an ingest of the "
                             f"landing folder does")
    caps = Captures()
    caps.landing.append(LandingChoice(choice.folder, choice.qmgr, at, sorted(chosen, key=lambda c: c.key),
                                      choice.skipped))
    caps.skipped.extend(choice.skipped)
    for c, cap in zip(chosen, parsed):
        caps.files.append(str(c.path))
        caps.records.extend(cap.records)
        caps.problems.extend(cap.problems)
        if cap.banner_qmgr:
            caps.banner_qmgrs[str(c.path)] = cap.banner_qmgr
    return caps, notes


def lint_mqsc(given_paths: Sequence[str], at) -> Linted:
    """Lint the captures of ``--mqsc`` paths (a landing date folder stands for each of its queue managers), with
    the day's put files when they are one landing date's folders. InputError when a path cannot be linted."""
    from clwl.analyses.lint import count_puts, lint_captures
    from clwl.engine.view import local_qmgr_name
    from clwl.parse.common import InputError

    records: dict[str, list] = {}
    for given in given_paths:
        _refuse_landing_root("lint", given)
        paths = _expand(given)
        for path in paths:
            try:
                caps, notes = _read_qmgr(path, at)
            except InputError as e:
                if paths == [given]:
                    raise
                # one queue manager of a date folder: the others are still worth linting
                say(f"clwl lint: warning: {e} (queue manager not linted)", sys.stderr)
                continue
            report_captures("lint", caps)  # no view here: clwl.analyses.lint.observe builds each queue manager's
            for note in notes:
                say(f"clwl lint: warning: {note}", sys.stderr)
            if not caps.records:
                raise InputError(path, "holds no DISPLAY records (runmqsc or MQ REST output) to lint")
            records.setdefault(local_qmgr_name(caps), []).extend(caps.records)
    traffic, day, source, messages = None, "", "", None
    landing = _landing_day(given_paths)
    if landing is not None:
        from clwl.analyses.check import put_records
        from clwl.analyses.lint_model import messages_of
        from spark.ingest import LandingError

        root, day = landing
        try:
            puts = put_records(root, day)
            traffic = count_puts((s, f.get("queue"), f.get("bind"), f.get("from_cluster_channel"))
                                 for s, _, _, f in puts)
            messages = messages_of(puts)
            source = f"the put files of {day} in {root}"
        except LandingError as e:  # the captures were read: lint them, without the day's messages
            print(f"clwl lint: warning: the day's messages are not counted: {e}", file=sys.stderr)
            traffic, day = None, ""
    findings = lint_captures(records, traffic, day, messages)
    return Linted(findings, ", ".join(sorted(records)), source)


def _refuse_landing_root(command: str, given: str) -> None:
    """A whole landing folder (run date folders in it) given as --mqsc: InputError naming the date folder to give
    instead (lint reads every queue manager of a date folder)."""
    from clwl.landing.layout import is_run_date
    from clwl.parse.common import InputError

    p = Path(given)
    if not p.is_dir() or is_run_date(p.name):
        return
    dates = sorted(f.name for f in p.iterdir() if f.is_dir() and is_run_date(f.name))
    if dates and not any(f.is_file() for f in p.iterdir() if not f.name.startswith(".")):
        raise InputError(given, f"a landing folder, one folder per run date ({', '.join(dates)}): {command} reads "
                                f"the captures of one date, every queue manager of it: give its date folder "
                                f"(--mqsc {p / dates[-1]}), or one queue manager's folder in it")


def write_readable(linted: Linted) -> None:
    """The findings, grouped by queue manager, each with its detail and remedy wrapped under the rule name."""
    from clwl.analyses.lint import NOTICE, RULE_NAMES

    findings, source, traffic = linted.findings, linted.source, linted.traffic
    w = sys.stdout.write
    # Names come from captures or the lake: escaped before they are wrapped, so that a remedy line pasted into
    # runmqsc is what the terminal showed
    findings = [replace(f, qmgr=printable(f.qmgr), object=printable(f.object), detail=printable(f.detail),
                        remedy=printable(f.remedy), seen_by=tuple(printable(x) for x in f.seen_by))
                for f in findings]
    source = printable(source)
    if not findings:
        w(f"No findings (linted: {source}).\n")
        return
    qmgrs = list(dict.fromkeys(f.qmgr for f in findings))  # the findings' order (clwl.analyses.lint.sort_findings)
    notices = sum(f.severity == NOTICE for f in findings)
    w(f"{len(findings)} finding(s) on {len(qmgrs)} queue manager(s) (linted: {source})"
      + (f"; {notices} of them notice(s): a default no message of the day went through (counted from {traffic})"
         if notices else "")
      + "\n")
    width = max(len(f.rule) for f in findings)
    pad = " " * (width + 6)
    for qm in qmgrs:
        w(f"\n{qm}\n")
        for f in (f for f in findings if f.qmgr == qm):
            w(f"  {f.rule:<{width}}  {f.object}" + (f"  ({f.severity})" if f.severity == NOTICE else "") + "\n")
            for text, indent in ((f.detail, ""), (f"remedy: {f.remedy}", "  ")):
                w(textwrap.fill(text, WRAP, initial_indent=pad, subsequent_indent=pad + indent,
                                break_long_words=False, break_on_hyphens=False) + "\n")
            if list(f.seen_by) != [f.qmgr]:
                w(textwrap.fill(f"seen by: {', '.join(f.seen_by)}", WRAP, initial_indent=pad,
                                subsequent_indent=pad + "  ", break_long_words=False, break_on_hyphens=False) + "\n")
    counts = Counter(f.rule for f in findings)
    w("\nBy rule: " + ", ".join(f"{name} {counts[name]}" for name in RULE_NAMES if counts[name]) + "\n")
