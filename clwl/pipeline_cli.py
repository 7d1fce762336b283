"""``clwl`` pipeline commands (see docs/cli-contract.md, "Pipeline commands").

``add_ingest_command(subparsers)`` registers ``clwl ingest``. Spark is imported inside the handler only, so
``import clwl`` (and ``clwl route``) stays free of pyspark.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

EXIT_OK, EXIT_INPUT = 0, 2


def _run_date(text: str) -> str:
    try:
        if len(text) != 10:
            raise ValueError
        date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None
    return text


def add_ingest_command(subparsers) -> argparse.ArgumentParser:
    """Register ``clwl ingest [--landing DIR] [--lake DIR] [--date YYYY-MM-DD ...] [--master URL] [--force]``."""
    p = subparsers.add_parser(
        "ingest", help="ingest the landing folder's MQ exports into the lake (bronze, silver, quarantine)",
        description=_DESCRIPTION)
    _add_ingest_arguments(p)
    return p


_DESCRIPTION = ("Parse every file of the landing folder's run dates (<landing>/<YYYY-MM-DD>/<QM>/<file>) into the "
                "Delta tables <lake>/bronze/... and <lake>/silver/...; records that cannot be read go to "
                "<lake>/silver/quarantine. Files already ingested and unchanged are not read again.")


def _add_ingest_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--landing", metavar="DIR", help="landing folder (default: CLWL_LANDING, else samples/landing)")
    p.add_argument("--lake", metavar="DIR", help="lake folder (default: CLWL_LAKE, else ./lake)")
    p.add_argument("--date", dest="dates", action="append", type=_run_date, metavar="YYYY-MM-DD",
                   help="run date to ingest (repeatable; default: every date folder of the landing folder)")
    p.add_argument("--master", metavar="URL", help="Spark master (default: CLWL_SPARK_MASTER, else local[2])")
    p.add_argument("--force", action="store_true", help="read every file again, changed or not")
    p.set_defaults(func=cmd_ingest)


def ingest_main(argv=None) -> int:
    """``python -m spark.ingest`` (spark-submit): the options of ``clwl ingest``."""
    p = argparse.ArgumentParser(prog="python -m spark.ingest", description=_DESCRIPTION)
    _add_ingest_arguments(p)
    args = p.parse_args(argv)
    return args.func(args)


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
