"""The pipeline commands ``clwl run`` and ``clwl ingest`` (docs/cli-contract.md, "Pipeline commands").

Spark is imported inside the handlers only, so ``clwl route`` (and ``clwl --help``) never loads pyspark.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clwl.algorithm import PROFILES
from clwl.cli.argtypes import run_date
from clwl.cli.exit_codes import EXIT_BLOCKED, EXIT_INPUT, EXIT_OK


def add_run_command(subparsers) -> argparse.ArgumentParser:
    run = subparsers.add_parser(
        "run", help="run the pipeline: ingest, replay, detect, validate, publish, report",
        description="Run ingest -> replay -> detect -> validate -> publish for each run date, on the embedded "
                    "default (Spark local mode, Delta on local disk) unless --master names a cluster.")
    run.add_argument("--landing", metavar="DIR", help="landing folder (default: the bundled samples/landing)")
    run.add_argument("--lake", metavar="DIR", help="Delta lake root (default ./lake)")
    run.add_argument("--date", action="append", metavar="YYYY-MM-DD",
                     help="run date (repeatable; default: every date present in the landing folder)")
    run.add_argument("--master", metavar="URL", help="Spark master (default local[2])")
    run.add_argument("--algorithm", choices=sorted(PROFILES), default="default", metavar="PROFILE",
                     help="algorithm profile for the replay")
    run.add_argument("--what-if", metavar="JSON",
                     help='what-if overrides, e.g. \'{"name": "w80", "channel_attrs": {"TO.QM2": {"CLWLWGHT": 80}}}\''
                          " (keys: name, channel_attrs, suspend, channel_state, queue_attrs; see the README); "
                          "replays the ingested day with them and writes only under <lake>/whatif/<name>/, never "
                          "to the published tables; query it with clwl query --whatif NAME")
    run.set_defaults(func=cmd_run)
    return run


def cmd_run(args: argparse.Namespace) -> int:
    import datetime as _dt

    overrides = {k: v for k, v in (("lake", args.lake), ("landing", args.landing), ("master", args.master)) if v}
    from spark.config import PipelineConfig  # no pyspark import: the config is plain Python

    config = PipelineConfig.from_env(**{k: (Path(v) if k != "master" else v) for k, v in overrides.items()})
    if not Path(config.landing).is_dir():
        print(f"clwl run: {config.landing}: landing folder does not exist", file=sys.stderr)
        return EXIT_INPUT
    for d in args.date or ():
        try:
            _dt.date.fromisoformat(d)
        except ValueError:
            print(f"clwl run: --date {d}: not a date (YYYY-MM-DD)", file=sys.stderr)
            return EXIT_INPUT
        if not (Path(config.landing) / d).is_dir():
            print(f"clwl run: {Path(config.landing) / d}: no landing folder for {d}", file=sys.stderr)
            return EXIT_INPUT
    whatif = None
    if args.what_if:
        from clwl.whatif import WhatIfError, parse_whatif

        try:  # refused before Spark starts: one line, exit 2
            whatif = parse_whatif(args.what_if)
        except WhatIfError as e:
            print(f"clwl run: --what-if: {e}", file=sys.stderr)
            return EXIT_INPUT
    from spark.pipeline import run_pipeline

    def progress(msg: str) -> None:
        print(msg, flush=True)

    from clwl.lakelock import LakeLockError
    from clwl.whatif import WhatIfError

    try:
        outcome = run_pipeline(config, args.date, args.algorithm, whatif, progress=progress)
    except LakeLockError as e:  # another writer holds <lake>/_lock: one line, exit 2
        print(f"clwl run: {e}", file=sys.stderr)
        return EXIT_INPUT
    except WhatIfError as e:  # names the day does not know, or nothing ingested: before Spark started
        print(f"clwl run: --what-if: {e}", file=sys.stderr)
        return EXIT_INPUT
    print()
    stages = ", ".join(f"{k} {v:.1f} s" for k, v in outcome.seconds.items() if k != "total")
    print(f"run {outcome.run_id}: {outcome.seconds.get('total', 0):.1f} s ({stages})")
    for d in outcome.dates:
        state = "published" if d.published else "BLOCKED by the quality gate"
        print(f"  {d.run_date}: {state}; {d.messages} messages, {d.stuck} stuck, {d.unexpected} unexpected")
        for warning in getattr(d, "warnings", ()):
            print(f"    WARNING: {warning}")
        if d.report_html:
            print(f"    report: {d.report_html}")
            print(f"    summary: {d.report_md}")
        if not d.published:
            for f in d.failures:
                print(f"    failed: {f}")
            print(f"    validation result: {d.validation_result}")
            print("    the last good published tables stay in place")
    return EXIT_OK if outcome.published else EXIT_BLOCKED


_INGEST_DESCRIPTION = (
    "Parse every file of the landing folder's run dates (<landing>/<YYYY-MM-DD>/<QM>/<file>) into the "
    "Delta tables <lake>/bronze/... and <lake>/silver/...; records that cannot be read go to "
    "<lake>/silver/quarantine. Files already ingested and unchanged are not read again.")


def add_ingest_command(subparsers) -> argparse.ArgumentParser:
    """Register ``clwl ingest [--landing DIR] [--lake DIR] [--date YYYY-MM-DD ...] [--master URL] [--force]``."""
    p = subparsers.add_parser(
        "ingest", help="ingest the landing folder's MQ exports into the lake (bronze, silver, quarantine)",
        description=_INGEST_DESCRIPTION)
    p.add_argument("--landing", metavar="DIR", help="landing folder (default: CLWL_LANDING, else samples/landing)")
    p.add_argument("--lake", metavar="DIR", help="lake folder (default: CLWL_LAKE, else ./lake)")
    p.add_argument("--date", dest="dates", action="append", type=run_date, metavar="YYYY-MM-DD",
                   help="run date to ingest (repeatable; default: every date folder of the landing folder)")
    p.add_argument("--master", metavar="URL", help="Spark master (default: CLWL_SPARK_MASTER, else local[2])")
    p.add_argument("--force", action="store_true", help="read every file again, changed or not")
    p.set_defaults(func=cmd_ingest)
    return p


def cmd_ingest(args: argparse.Namespace) -> int:
    from spark.config import PipelineConfig

    config = PipelineConfig.from_env(landing=args.landing, lake=args.lake, master=args.master)
    landing = Path(config.landing)
    if not landing.is_dir():
        what = "does not exist" if not landing.exists() else "is not a folder"
        print(f"clwl ingest: landing folder {landing} {what}", file=sys.stderr)
        return EXIT_INPUT
    for d in args.dates or ():
        if not (landing / d).is_dir():
            print(f"clwl ingest: no folder for run date {d} in {landing}", file=sys.stderr)
            return EXIT_INPUT

    from clwl.lakelock import LakeLockError, lake_lock
    from spark.ingest import LandingError, ingest  # starts nothing yet; the session starts inside ingest()

    try:
        with lake_lock(config.lake, purpose="clwl ingest", progress=lambda line: print(line, flush=True)):
            summary = ingest(config, run_dates=args.dates, force=args.force,
                             progress=lambda line: print(line, flush=True))
    except (LandingError, LakeLockError) as exc:  # LakeLockError: another writer holds <lake>/_lock
        print(f"clwl ingest: {exc}", file=sys.stderr)
        return EXIT_INPUT
    print()
    print(summary.format_table())
    return EXIT_OK
