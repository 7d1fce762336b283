"""``clwl lint (--mqsc PATH ... [--at TIME] | --lake LAKE --date D) [--json]``: configuration findings from the
captures alone (the rules are clwl/lint.py's, docs/lint.md says what each means).

Exit 0 when the lint ran, whether it found something or not (a finding is advice, not a failure); 2 when the
input cannot be used: a missing folder, no captures, a date the lake does not hold, both or neither of --mqsc
and --lake.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Sequence

from clwl.cli.exit_codes import EXIT_INPUT, EXIT_OK
from clwl.cli.options import AT, DATE, LAKE_LOCATION, lake_location_to_read, report_captures
from clwl.terminal import printable, say

WRAP = 110  # readable lines: detail and remedy wrapped under the rule name


def add_lint_command(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "lint", help="configuration findings from the captures (no JVM)",
        description="Findings from the captured configuration alone: what MQ will do with it that an "
                    "administrator may not expect, each with the observing queue manager, the object, and the "
                    "remedy in MQ's terms. Rules: " + ", ".join(_rule_names()) + " (docs/lint.md).",
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
    p.set_defaults(func=cmd_lint)
    return p


def _rule_names() -> Sequence[str]:
    from clwl.lint import RULE_NAMES

    return RULE_NAMES


def _fail(message: str) -> int:
    say(f"clwl lint: {message}", sys.stderr)
    return EXIT_INPUT


def cmd_lint(args: argparse.Namespace) -> int:
    if args.mqsc and (args.lake is not None or args.date is not None):
        return _fail("give either --mqsc PATH (captures) or --lake LAKE --date YYYY-MM-DD (a run date), not both")
    if args.mqsc:
        return _lint_mqsc(args)
    if args.at is not None:
        return _fail("--at chooses among the captures of --mqsc landing folders; none was given")
    if args.date is None:
        what = "--lake needs --date YYYY-MM-DD" if args.lake is not None else \
            "give --mqsc PATH (captures) or --lake LAKE --date YYYY-MM-DD (a run date)"
        return _fail(what)
    return _lint_lake(args)


def _lint_lake(args: argparse.Namespace) -> int:
    lake = lake_location_to_read("lint", args.lake)
    if lake is None:
        return EXIT_INPUT
    from clwl.lake import LakeFileError
    from clwl.lint import LintInputError, lint_lake

    try:
        findings = lint_lake(lake, args.date)
    except (LintInputError, LakeFileError) as e:  # LakeFileError: a damaged table, named
        return _fail(str(e))
    _print(findings, args.json, f"{lake}, run date {args.date}")
    return EXIT_OK


def _expand(path: str) -> list[str]:
    """A landing date folder (queue manager folders under a YYYY-MM-DD folder) stands for each of them."""
    from clwl.landing import is_run_date

    p = Path(path)
    if p.is_dir() and is_run_date(p.name):
        subs = sorted(f for f in p.iterdir() if f.is_dir() and not f.name.startswith("."))
        if subs:
            return [str(f) for f in subs]
    return [path]


def _lint_mqsc(args: argparse.Namespace) -> int:
    from clwl.lint import lint_captures
    from clwl.parse.common import InputError
    from clwl.view import local_qmgr_name, read_captures

    records: dict[str, list] = {}
    try:
        for given in args.mqsc:
            paths = _expand(given)
            for path in paths:
                try:
                    caps = read_captures([path], args.at)
                except InputError as e:
                    if paths == [given]:
                        raise
                    # one queue manager of a date folder: the others are still worth linting
                    say(f"clwl lint: warning: {e} (queue manager not linted)", sys.stderr)
                    continue
                report_captures("lint", caps)  # no view here: clwl.lint.observe builds each queue manager's
                if not caps.records:
                    raise InputError(path, "holds no DISPLAY records (runmqsc or MQ REST output) to lint")
                records.setdefault(local_qmgr_name(caps), []).extend(caps.records)
    except InputError as e:
        return _fail(str(e))
    findings = lint_captures(records)
    _print(findings, args.json, ", ".join(sorted(records)))
    return EXIT_OK


def _print(findings, as_json: bool, source: str) -> None:
    from clwl.lint import RULE_NAMES, Finding, findings_json

    w = sys.stdout.write
    if as_json:
        w(json.dumps(findings_json(findings)) + "\n")  # JSON writes control characters as \u escapes
        return
    # Names come from captures or the lake: escaped before they are wrapped, so that a remedy line pasted into
    # runmqsc is what the terminal showed
    findings = [Finding(**{k: printable(v) for k, v in f.as_dict().items()}) for f in findings]
    source = printable(source)
    if not findings:
        w(f"No findings (linted: {source}).\n")
        return
    qmgrs = sorted({f.qmgr for f in findings})
    w(f"{len(findings)} finding(s) on {len(qmgrs)} observing queue manager(s) (linted: {source})\n")
    width = max(len(f.rule) for f in findings)
    pad = " " * (width + 6)
    for qm in qmgrs:
        w(f"\n{qm}\n")
        for f in (f for f in findings if f.qmgr == qm):
            w(f"  {f.rule:<{width}}  {f.object}\n")
            w(textwrap.fill(f.detail, WRAP, initial_indent=pad, subsequent_indent=pad, break_long_words=False,
                            break_on_hyphens=False) + "\n")
            w(textwrap.fill(f"remedy: {f.remedy}", WRAP, initial_indent=pad, subsequent_indent=pad + "  ",
                            break_long_words=False, break_on_hyphens=False) + "\n")
    counts = Counter(f.rule for f in findings)
    w("\nBy rule: " + ", ".join(f"{name} {counts[name]}" for name in RULE_NAMES if counts[name]) + "\n")
