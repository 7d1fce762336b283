"""``clwl drift --date D [--lake LAKE] [--since D0] [--json]``: what changed in the configuration since the previous
run date, and what it did to each queue's configured shares.

The work is clwl/analyses/drift.py (silver.config_history through the lake's door, the engine's shares; no JVM); this
module prints it: a table of changes, then the share effects, or one line saying nothing changed.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from clwl.cli.options import DATE, LAKE_LOCATION, aligned
from clwl.cli.task import LakeTask
from clwl.terminal import printable


def add_drift_command(subparsers) -> argparse.ArgumentParser:
    d = subparsers.add_parser(
        "drift", help="what changed in the configuration since the previous run date (no JVM)",
        description="Every configuration change the captures of a run date showed, against the configuration in "
                    "force at the end of the day before (or of --since): per observing queue manager, the object, "
                    "the attribute, its old and new value, when it was captured and MQ's own stamp of it "
                    "(ALTDATE/ALTTIME, or CLUSDATE/CLUSTIME for what the cluster brought); objects that appeared "
                    "or went are changes too. Then, per queue manager and cluster queue, the configured shares "
                    "(the engine, every channel running) before and after each change that moved them. Read from "
                    "silver.config_history; docs/drift.md says what is and is not compared.",
        epilog="example: clwl drift --date 2026-11-20 (the samples: QM4 resumed in CL1, seen at 06:00; QM4's "
               "APP.ORDERS put-disabled at 17:55, seen at 18:00)")
    LAKE_LOCATION.add(d)
    DATE.add(d, help="the run date whose captures are compared", required=True)
    d.add_argument("--since", type=DATE.kwargs["type"], metavar="YYYY-MM-DD",
                   help="compare with the configuration in force at the end of this earlier run date (default: "
                        "the day before --date); every change after it, up to the end of --date, is listed")
    d.add_argument("--json", action="store_true", help="one JSON object (timestamps ISO-8601, shares in percent)")
    d.set_defaults(func=DriftTask.main)
    return d


class DriftTask(LakeTask):
    command = "drift"

    def failures(self):
        from clwl.analyses.drift import DriftError

        return (DriftError,)

    def compute(self):
        from clwl.analyses.drift import drift

        return drift(self.lake, self.date, self.args.since)

    def json_document(self, found) -> dict:
        return found.as_dict()

    def render_text(self, found) -> None:
        sys.stdout.write(readable(found))


# -- the readable answer ----------------------------------------------------------------------------------------
def _t(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S")


def _shown(value: str) -> str:
    """A value as the table shows it: a blank value (MQSC's ``( )``) would be an empty cell."""
    return "(blank)" if value == "" else value


def _pct(shares: dict[str, float], qmgr: str) -> str:
    if not shares:
        return "-"  # no destination at all: the put fails
    return f"{shares.get(qmgr, 0.0):.1f} %"


def readable(found) -> str:
    """The drift as text: what was compared, the changes, the share effects, what is not compared."""
    from clwl.analyses.drift import NOT_CONFIGURATION

    out = [f"Configuration drift on {found.run_date}: the captures from {_t(found.baseline_at)} to "
           f"{_t(found.until)} UTC against the configuration in force at the end of {found.since}; "
           f"{len(found.qmgrs)} queue manager(s): {', '.join(found.qmgrs)}"]
    if found.captures is not None:
        out.append("Configuration captures compared: " + ", ".join(f"{q} {n}" for q, n in found.captures.items()))
    for qmgr, t in sorted(found.first_captured.items()):
        out.append(f"{qmgr}: first captured {_t(t)} UTC, nothing earlier to compare with: compared from that "
                   "capture on")
    out.append("")
    if not found.changes:
        out.append(f"No configuration change since the end of {found.since}.")
    else:
        out.append(f"Changes ({len(found.changes)}; captured: the capture that first showed it, UTC; MQ's stamp: "
                   "the queue manager's own clock)")
        out += aligned([("captured", "qmgr", "object", "attribute", "old", "new", "MQ's stamp"),
                        *((_t(c.at), c.qmgr, c.object, c.attribute, _shown(c.old), _shown(c.new), c.stamp or "")
                          for c in found.changes)], indent="  ")
    out.append("")
    if found.effects:
        out.append("Effect on the configured shares (the engine, every channel running; -: no destination, the "
                   "put fails)")
        out += aligned([("at", "qmgr", "queue", "destination", "before", "after"),
                        *((_t(e.at), e.qmgr, e.queue, q, _pct(e.before, q), _pct(e.after, q))
                          for e in found.effects for q, _, _ in e.destinations())], indent="  ")
    elif found.changes:
        out.append("No configured share changed.")
    if found.changes or found.effects:
        out.append("")
    if found.unknown:  # not compared: one line each, however often the captures showed or dropped it
        out.append(f"Attributes clwl does not know ({len(found.unknown)}; not compared as configuration: an attribute "
                   "of a newer MQ level, or one a capture made up; what the captures showed of it, from the start "
                   "of the window)")
        out += aligned([("qmgr", "object", "attribute", "shown"),
                        *((u.qmgr, u.object, u.attribute, u.shown()) for u in found.unknown)], indent="  ")
        out.append("")
    skipped = "; ".join(f"{'/'.join(sorted(r.attributes))}" + (f" of {'/'.join(sorted(r.kinds))}" if r.kinds else "")
                        for r in NOT_CONFIGURATION)
    out.append(f"Not compared (not configuration): {skipped}; channel status (clwl route --at, the report).")
    return "\n".join(map(printable, out)) + "\n"  # each line escaped: names and values come from the lake
