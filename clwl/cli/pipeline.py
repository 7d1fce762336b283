"""The pipeline commands ``clwl run`` and ``clwl ingest`` (docs/cli-contract.md, "Pipeline commands").

Spark is imported inside the handlers only, so ``clwl route`` (and ``clwl --help``) never loads pyspark.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

from clwl.cli.exit_codes import EXIT_BLOCKED, EXIT_INPUT, EXIT_OK
from clwl.cli.extras import INGEST_MODULES, RUN_MODULES, missing_extra
from clwl.cli.options import (
    DATE_FROM,
    DATE_TO,
    DATES,
    LAKE_LOCATION,
    LANDING,
    MASTER,
    METRICS_FILE,
    PUSHGATEWAY,
    TRACE_TZ,
    VERBOSE,
    no_run_dates,
)
from clwl.engine.algorithm import PROFILES
from clwl.landing.layout import run_date_folders
from clwl.terminal import printable, say


def _landing_problem(command: str, landing: Path, given: bool) -> Optional[str]:
    """The one line when the landing folder cannot be used, else None."""
    if landing.is_dir():
        return None
    if not given:  # the default: the bundled samples, which a non-editable install does not carry
        return (f"clwl {command}: no landing folder given, and the bundled samples ({landing}) are not here (they "
                "come with the source checkout): pass --landing DIR or set CLWL_LANDING")
    what = "does not exist" if not landing.exists() else "is not a folder"
    return f"clwl {command}: landing folder {landing} {what}"


def _dates_label(dates: list[str]) -> str:
    return ", ".join(dates) if len(dates) <= 3 else f"{len(dates)} run dates, {dates[0]} .. {dates[-1]}"


def progress(line: str) -> None:
    print(printable(line), flush=True)  # lines name landing files and folders: never their raw control characters


def _start(command: str, args: argparse.Namespace, dates: list[str], landing: Path, config) -> Optional[str]:
    """The command's first line (before Spark starts, so the user sees what it does at once), the activity-trace
    time zone, then Java and the Delta jars. The one line for stderr when it cannot go on, else None."""
    problem = _zone_problem(command, args)
    if problem:
        return problem
    if getattr(config, "remote", None):  # a Spark Connect server does the work: no Java or jars needed here
        progress(f"clwl {command}: {_dates_label(dates)} from {landing} into {config.lake}; "
                 f"attaching to Spark Connect at {config.remote}")
        return None
    from spark.jars import java_executable

    if java_executable() is not None:  # else the one line is the missing Java, below
        progress(f"clwl {command}: {_dates_label(dates)} from {landing} into {config.lake}; "
                 f"starting Spark ({config.master})")
    return _prepare_spark(command, config.verbose, config.lake)


def _java_problem(command: str, config) -> Optional[str]:
    """The one line when Spark cannot start here for want of Java (asked before the lake lock is taken, so that a
    machine without Java leaves no lake folder behind), else None."""
    if getattr(config, "remote", None):
        return None
    from spark.jars import SparkStartError, check_java

    try:
        check_java()
    except SparkStartError as e:
        return f"clwl {command}: {e}"
    return None


@contextmanager
def _writer(command: str, config, purpose: str):
    """The lake lock for the whole command, taken before Spark starts (and before "starting Spark" is printed):
    a busy lake is one line and exit 2 at once, however long Spark would take to start (clwl/lake/lock.py)."""
    from clwl.lake.lock import lake_lock

    with lake_lock(config.lake, purpose=purpose, progress=progress):
        yield


def _zone_problem(command: str, args: argparse.Namespace) -> Optional[str]:
    """The one line for a --trace-tz that names no time zone, else None."""
    zone = getattr(args, "trace_tz", None)
    if zone:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            return f"clwl {command}: --trace-tz {zone}: not a time zone name (e.g. UTC, Europe/London)"
    return None


def _prepare_spark(command: str, verbose: bool, lake=None) -> Optional[str]:
    """Before Spark starts: Java present, the Delta jars local (fetched once, with a progress line), and for a
    lake on an object store the S3A connector's jars too. The one line for stderr when Spark cannot start here,
    else None."""
    from clwl.lake.storage import is_object_store
    from spark.jars import SparkStartError, check_java, local_delta_jars, local_s3a_jars

    try:
        check_java()
        local_delta_jars(progress=progress, shown_output=verbose)
        if is_object_store(lake):
            local_s3a_jars(progress=progress, shown_output=verbose)
    except SparkStartError as e:
        return f"clwl {command}: {e}"
    return None


def add_run_command(subparsers) -> argparse.ArgumentParser:
    run = subparsers.add_parser(
        "run", help="run the pipeline: ingest, replay, detect, validate, publish, report",
        description="Run ingest -> replay -> detect -> validate -> publish for each run date, on the embedded "
                    "default (Spark local mode, Delta on local disk) unless --master names a cluster.")
    for option in (LANDING, LAKE_LOCATION, DATES, DATE_FROM, DATE_TO, MASTER):
        option.add(run)
    run.add_argument("--algorithm", choices=sorted(PROFILES), default="default", metavar="PROFILE",
                     help="algorithm profile for the replay")
    VERBOSE.add(run)
    TRACE_TZ.add(run)
    run.add_argument("--what-if", metavar="JSON",
                     help='what-if overrides, e.g. \'{"name": "w80", "channel_attrs": {"TO.QM2": {"CLWLWGHT": 80}}}\''
                          " (keys: name, channel_attrs, suspend, channel_state, queue_attrs; see the README); "
                          "replays the ingested day with them and writes only under <lake>/whatif/<name>/, never "
                          "to the published tables; query it with clwl query --whatif NAME")
    run.add_argument("--force", action="store_true",
                     help="run every date again, also one whose inputs, options and code are those of its published "
                          "run (without it such a date is left as published)")
    METRICS_FILE.add(run)
    PUSHGATEWAY.add(run)
    run.set_defaults(func=cmd_run)
    return run


def _lake_problem(command: str, config) -> Optional[str]:
    """The one line when the lake's store cannot be used (no credentials, a bad endpoint, a store without
    conditional writes), before anything is written; None for a local lake or a usable store."""
    from clwl.lake.storage import StorageError, store_for

    try:
        store_for(config.lake).check_writable(config.lake)
    except StorageError as e:
        return f"clwl {command}: {e}"
    return None


def _config(command: str, **given):
    """PipelineConfig.from_env with the command's options; (None, the one line) for a typo of $CLWL_LAKE or an
    object store that cannot be used."""
    from clwl.lake.storage import StorageError
    from spark.config import PipelineConfig  # no pyspark import: the config is plain Python

    try:
        config = PipelineConfig.from_env(**given)
    except StorageError as e:
        return None, f"clwl {command}: {e}"
    return config, _lake_problem(command, config)


def cmd_run(args: argparse.Namespace) -> int:
    problem = missing_extra("run", RUN_MODULES)
    if problem:
        say(problem, sys.stderr)
        return EXIT_INPUT
    overrides = {k: v for k, v in (("lake", args.lake), ("landing", args.landing), ("master", args.master)) if v}
    config, problem = _config("run", **{k: (Path(v) if k == "landing" else v) for k, v in overrides.items()},
                              trace_tz=args.trace_tz, verbose=args.verbose or None)
    if problem:
        say(problem, sys.stderr)
        return EXIT_INPUT
    landing = Path(config.landing)
    problem = _landing_problem("run", landing, bool(args.landing or os.environ.get("CLWL_LANDING", "").strip()))
    if problem:
        say(problem, sys.stderr)
        return EXIT_INPUT
    for d in args.dates or ():  # each a YYYY-MM-DD already (options.DATES)
        if not (landing / d).is_dir():
            say(f"clwl run: {landing / d}: no landing folder for {d}", sys.stderr)
            return EXIT_INPUT
    dates = sorted(set(args.dates)) if args.dates else run_date_folders(landing)
    if not dates:  # nothing to do: say so before Spark starts, not after a run that did nothing
        say(no_run_dates("run", landing), sys.stderr)
        return EXIT_INPUT
    if args.date_from or args.date_to:
        dates, problem = backfill_dates(args, dates, landing)
        if problem:
            say(problem, sys.stderr)
            return EXIT_INPUT
        args.dates = dates  # run_pipeline takes exactly these, in order
    whatif = None
    if args.what_if:
        from clwl.analyses.whatif import WhatIfError, parse_whatif

        try:  # refused before Spark starts: one line, exit 2
            whatif = parse_whatif(args.what_if)
        except WhatIfError as e:
            say(f"clwl run: --what-if: {e}", sys.stderr)
            return EXIT_INPUT
        if args.metrics_file or args.pushgateway:  # the gauges are the published lake's, which a what-if leaves
            say("clwl run: --metrics-file and --pushgateway describe the published tables, which a what-if run "
                "does not change: run without --what-if", sys.stderr)
            return EXIT_INPUT

    from clwl.analyses.whatif import WhatIfError
    from clwl.lake.door import LakeFileError
    from clwl.lake.lock import LakeLockError
    from spark.pipeline import new_run_id, run_pipeline, unchanged_run
    from spark.publish import PublishError
    from spark.session import SparkStartError

    outcome = None
    problem = _zone_problem("run", args)  # before the unchanged check: it reads the traces' zone too
    if problem:
        say(problem, sys.stderr)
        return EXIT_INPUT
    if not args.force:
        try:  # nothing new and every date as published: said in seconds, without starting Spark
            outcome = unchanged_run(config, dates, args.algorithm, whatif, progress=progress)
        except (LakeFileError, LakeLockError) as e:  # a report to write again needs the lake lock
            say(f"clwl run: {e}", sys.stderr)
            return EXIT_INPUT
    if outcome is not None:
        for d in outcome.dates:
            progress(f"{d.run_date}: unchanged since {d.unchanged_since}, published as is (--force runs it again)")
        return _finish(args, config, outcome)
    problem = _java_problem("run", config)
    if problem:
        say(problem, sys.stderr)
        return EXIT_INPUT

    run_id = new_run_id("run")
    try:
        with _writer("run", config, f"clwl run {run_id}"):  # the lake first: a busy lake starts no Spark
            problem = _start("run", args, dates, landing, config)
            if problem:
                say(problem, sys.stderr)
                return EXIT_INPUT
            outcome = run_pipeline(config, args.dates, args.algorithm, whatif, progress=progress, force=args.force,
                                   run_id=run_id)
    # another writer holds <lake>/_lock; the JVM exited at start; a damaged lake metadata file, named
    except (LakeLockError, SparkStartError, LakeFileError) as e:
        say(f"clwl run: {e}", sys.stderr)
        return EXIT_INPUT
    except WhatIfError as e:  # names the day does not know, or nothing ingested: before Spark started
        say(f"clwl run: --what-if: {e}", sys.stderr)
        return EXIT_INPUT
    except PublishError as e:  # the gate passed but gold refused a write (a CHECK constraint): nothing published
        say(f"clwl run: {e}; the last good published tables stay in place", sys.stderr)
        return EXIT_BLOCKED
    return _finish(args, config, outcome)


def backfill_dates(args: argparse.Namespace, folders: list[str], landing: Path) -> tuple[list[str], Optional[str]]:
    """The run dates of ``--from``/``--to``: the landing folder's date folders in that range, in order, and the line
    that says what the backfill will do (or (``[]``, the one error line)). Days of the range with no folder are
    named, not invented: a backfill replays what was landed. Each date is then run as ``--date`` runs it: one that
    is published with the same inputs, options and code is left as it is (so a retry redoes only what failed),
    and a date's run rewrites only that date's partitions."""
    if args.dates:
        return [], "clwl run: give either --date or --from/--to, not both"
    first, last = args.date_from or folders[0], args.date_to or folders[-1]
    if args.date_from and args.date_to and first > last:
        return [], f"clwl run: --from {first} is after --to {last}"
    dates = [d for d in folders if first <= d <= last]
    if not dates:
        return [], (f"clwl run: {landing}: no landing folder for a date from {args.date_from or '...'} to "
                    f"{args.date_to or '...'} (its date folders: {folders[0]} .. {folders[-1]})")
    from datetime import date, timedelta

    start, end = date.fromisoformat(first), date.fromisoformat(last)
    days = [(start + timedelta(n)).isoformat() for n in range((end - start).days + 1)]
    missing = [d for d in days if d not in dates]
    gaps = f"; no landing folder for {len(missing)} day(s): {', '.join(missing[:5])}" + (
        " ..." if len(missing) > 5 else "") if missing else ""
    progress(f"backfill {first} .. {last}: {len(dates)} date(s) in order{gaps}")
    return dates, None


def _print_outcome(outcome) -> int:
    # every line escaped: warnings and failures quote landing names and values, paths are the user's --lake
    say()
    stages = ", ".join(f"{k} {v:.1f} s" for k, v in outcome.seconds.items() if k != "total")
    total = outcome.seconds.get("total", sum(outcome.seconds.values()))
    say(f"run {outcome.run_id}: {total:.1f} s" + (f" ({stages})" if stages else ""))
    for d in outcome.dates:
        state = ("BLOCKED by the quality gate" if not d.published
                 else f"published (unchanged since {d.unchanged_since})" if d.unchanged_since else "published")
        say(f"  {d.run_date}: {state}; {d.messages} messages, {d.stuck} stuck, {d.unexpected} unexpected")
        for warning in getattr(d, "warnings", ()):
            say(f"    WARNING: {warning}")
        if d.report_html:
            say(f"    report: {d.report_html}")
            say(f"    summary: {d.report_md}")
        if not d.published:
            for f in d.failures:
                say(f"    failed: {f}")
            say(f"    validation result: {d.validation_result}")
            say("    the last good published tables stay in place")
    # One home for "did the run publish": RunOutcome.published (every date), never any one date.
    return EXIT_OK if outcome.published else EXIT_BLOCKED


def _finish(args: argparse.Namespace, config, outcome) -> int:
    """The outcome printed, then the latest published day's gauges written (--metrics-file) and pushed
    (--pushgateway, else $CLWL_PUSHGATEWAY; not for a what-if), also after a blocked run (clwl_publish_blocked 1).
    A file or gateway that cannot take them is a warning: the run's exit code stands."""
    code = _print_outcome(outcome)
    path = args.metrics_file
    gateway = args.pushgateway or (os.environ.get("CLWL_PUSHGATEWAY", "").strip() if not args.what_if else "")
    if not (path or gateway):
        return code
    from clwl.analyses.metrics import MetricsError, MetricsExportError, export
    from clwl.lake.door import LakeFileError

    try:
        found = export(config.lake, path, gateway or None, blocked=not outcome.published, stages=outcome.seconds)
    except (MetricsError, MetricsExportError, LakeFileError) as e:
        say(f"clwl run: warning: metrics not exported: {e}", sys.stderr)
        return code
    shown = f"run date {found.run_date}" if found.run_date else "no run date published"
    blocked = f", publish blocked: {', '.join(found.blocked)}" if found.blocked else ""
    say(f"  metrics ({shown}{blocked}): " + "; ".join(
        ([f"written to {path}"] if path else []) + ([f"pushed to {gateway}"] if gateway else [])))
    return code


_INGEST_DESCRIPTION = (
    "Parse every file of the landing folder's run dates (<landing>/<YYYY-MM-DD>/<QM>/<file>) into the "
    "Delta tables <lake>/bronze/... and <lake>/silver/...; records that cannot be read go to "
    "<lake>/silver/quarantine. Files already ingested and unchanged are not read again.")


def add_ingest_command(subparsers) -> argparse.ArgumentParser:
    """Register ``clwl ingest [--landing DIR] [--lake DIR] [--date YYYY-MM-DD ...] [--master URL] [--force]``."""
    p = subparsers.add_parser(
        "ingest", help="ingest the landing folder's MQ exports into the lake (bronze, silver, quarantine)",
        description=_INGEST_DESCRIPTION)
    for option in (LANDING, LAKE_LOCATION, DATES, MASTER):
        option.add(p)
    p.add_argument("--force", action="store_true", help="read every file again, changed or not")
    VERBOSE.add(p)
    TRACE_TZ.add(p)
    p.set_defaults(func=cmd_ingest)
    return p


def cmd_ingest(args: argparse.Namespace) -> int:
    problem = missing_extra("ingest", INGEST_MODULES)
    if problem:
        say(problem, sys.stderr)
        return EXIT_INPUT
    config, problem = _config("ingest", landing=args.landing, lake=args.lake, master=args.master,
                              trace_tz=args.trace_tz, verbose=args.verbose or None)
    if problem:
        say(problem, sys.stderr)
        return EXIT_INPUT
    landing = Path(config.landing)
    problem = _landing_problem("ingest", landing, bool(args.landing or os.environ.get("CLWL_LANDING", "").strip()))
    if problem:
        say(problem, sys.stderr)
        return EXIT_INPUT
    for d in args.dates or ():
        if not (landing / d).is_dir():
            say(f"clwl ingest: no folder for run date {d} in {landing}", sys.stderr)
            return EXIT_INPUT
    dates = sorted(set(args.dates)) if args.dates else run_date_folders(landing)
    if not dates:
        say(no_run_dates("ingest", landing), sys.stderr)
        return EXIT_INPUT

    problem = _zone_problem("ingest", args) or _java_problem("ingest", config)
    if problem:
        say(problem, sys.stderr)
        return EXIT_INPUT

    from clwl.lake.door import LakeFileError
    from clwl.lake.lock import LakeLockError
    from spark.ingest import LandingError, ingest  # starts nothing yet; the session starts inside ingest()
    from spark.session import SparkStartError

    try:
        with _writer("ingest", config, "clwl ingest"):  # the lake first: a busy lake starts no Spark
            problem = _start("ingest", args, dates, landing, config)
            if problem:
                say(problem, sys.stderr)
                return EXIT_INPUT
            summary = ingest(config, run_dates=args.dates, force=args.force, progress=progress)
    # LakeLockError: another writer holds the lake; LakeFileError: a damaged lake metadata file, named
    except (LandingError, LakeLockError, SparkStartError, LakeFileError) as exc:
        say(f"clwl ingest: {exc}", sys.stderr)
        return EXIT_INPUT
    print()
    print(summary.format_table())
    return EXIT_OK
