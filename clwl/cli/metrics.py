"""``clwl metrics [--lake LAKE] [--date D] [--json] [--metrics-file PATH] [--pushgateway URL]``: the latest
published day (or D) as Prometheus gauges.

The work is clwl/analyses/metrics.py (the gold tables at their published versions, the configuration and the evidence
through the lake's door; no JVM); this module prints the text exposition format (or, with --json, one document),
or writes it atomically for node_exporter's textfile collector, or pushes it to a Pushgateway. docs/metrics.md lists
every metric.
"""

from __future__ import annotations

import argparse
import sys

from clwl.cli.options import DATE, LAKE_LOCATION, METRICS_FILE, PUSHGATEWAY
from clwl.cli.task import LakeTask


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
    m.set_defaults(func=MetricsTask.main)
    return m


class MetricsTask(LakeTask):
    """The runner's steps (clwl.cli.task): the lake as every lake-reading command finds it, the gauges, then the
    file, the push and the printing (a file or gateway that cannot take them: one line, exit 2)."""

    command = "metrics"

    def failures(self) -> tuple[type[BaseException], ...]:
        from clwl.analyses.metrics import MetricsError, MetricsExportError

        return MetricsError, MetricsExportError

    def compute(self):
        from clwl.analyses.metrics import lake_metrics, push, write_atomically

        found = lake_metrics(self.lake, self.date)
        if self.args.metrics_file:
            write_atomically(self.args.metrics_file, found.text)
        if self.args.pushgateway:
            push(self.args.pushgateway, found.text)
        return found

    def json_document(self, found) -> dict:
        from clwl.analyses.metrics import as_json

        return as_json(found.families, found.run_date)

    def render_text(self, found) -> None:
        if not self.args.metrics_file:  # written to the file instead of printed
            sys.stdout.write(found.text)
