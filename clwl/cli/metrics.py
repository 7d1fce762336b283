"""``clwl metrics [--lake LAKE] [--date D] [--json] [--metrics-file PATH] [--pushgateway URL]``: the latest
published day (or D) as Prometheus gauges.

The work is clwl/analyses/metrics.py (the gold tables at their published versions, the configuration and the evidence
through the lake's door; no JVM); this module prints the text exposition format (or, with --json, one document),
or writes it atomically for node_exporter's textfile collector, or pushes it to a Pushgateway. docs/metrics.md lists
every metric.
"""

from __future__ import annotations

import argparse
import json
import sys

from clwl.cli.exit_codes import EXIT_INPUT, EXIT_OK
from clwl.cli.options import DATE, LAKE_LOCATION, METRICS_FILE, PUSHGATEWAY, lake_location_to_read
from clwl.terminal import say


def add_metrics_command(subparsers) -> argparse.ArgumentParser:
    m = subparsers.add_parser(
        "metrics", help="the latest published day as Prometheus gauges (no JVM)",
        description="The latest published run date (or --date) of the lake in the Prometheus text exposition "
                    "format: when the last publish finished, the run date shown, whether the quality gate blocked "
                    "a publish, shares observed and configured per sender, queue and instance, stuck and not "
                    "re-allocatable messages per sender and channel, incidents by side, configuration findings "
                    "and changes, evidence gaps, trace agreement. Names clwl_*, labels as IBM's ibmmq_* metrics "
                    "name them (qmgr, queue, channel, plus mq_cluster). See docs/metrics.md.",
        epilog="example: clwl metrics --lake lake --metrics-file /var/lib/node_exporter/textfile/clwl.prom")
    LAKE_LOCATION.add(m)
    DATE.add(m, help="the published run date to show (default: the latest published)")
    m.add_argument("--json", action="store_true", help="one JSON object: run_date and every metric with its samples")
    METRICS_FILE.add(m, help="write the text to PATH atomically (a temporary file beside it, then a rename) "
                             "instead of printing it")
    PUSHGATEWAY.add(m, help="also push the text to the Pushgateway at URL as the job clwl (replacing what it held); "
                            "unlike clwl run, $CLWL_PUSHGATEWAY is not read here")
    m.set_defaults(func=cmd_metrics)
    return m


def cmd_metrics(args: argparse.Namespace) -> int:
    lake = lake_location_to_read("metrics", args.lake)
    if lake is None:
        return EXIT_INPUT
    from clwl.analyses.metrics import (
        MetricsError,
        MetricsExportError,
        as_json,
        lake_metrics,
        push,
        write_atomically,
    )

    try:
        found = lake_metrics(lake, args.date)
    except MetricsError as e:
        say(f"clwl metrics: {e}", sys.stderr)
        return EXIT_INPUT
    text = found.text
    try:
        if args.metrics_file:
            write_atomically(args.metrics_file, text)
        if args.pushgateway:
            push(args.pushgateway, text)
    except MetricsExportError as e:
        say(f"clwl metrics: {e}", sys.stderr)
        return EXIT_INPUT
    if args.json:
        sys.stdout.write(json.dumps(as_json(found.families, found.run_date)) + "\n")
    elif not args.metrics_file:
        sys.stdout.write(text)
    return EXIT_OK
