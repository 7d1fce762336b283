"""``clwl route``: docs/cli-contract.md to the letter. The routing itself is the engine's (clwl.engine.router)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import replace
from typing import Sequence

from clwl.analyses.lint import BindDecision, bind_decision
from clwl.cli.argtypes import whole_number
from clwl.cli.exit_codes import EXIT_INPUT, EXIT_OK, EXIT_UNROUTABLE
from clwl.cli.options import AT, aligned, landing_folder_refusal, report_captures
from clwl.engine.algorithm import MQRC_UNKNOWN_OBJECT_NAME, PROFILE_DOCS, PROFILES, Request
from clwl.engine.candidates import known_queue_names
from clwl.engine.model import IGQ_DEFAULT_MAX_MESSAGE, MOVING_STATES, QSG_XMITQ
from clwl.engine.router import AS_Q_DEF, Route, RouteError, Router
from clwl.engine.view import build_view, local_qmgr_name, read_captures, unknown_object_hint
from clwl.engine.xmitq import igq_evidence_gap
from clwl.parse.common import InputError
from clwl.terminal import printable, say

_positive, _nonnegative = whole_number(1), whole_number(0)
_UNKNOWN_OBJECT = MQRC_UNKNOWN_OBJECT_NAME[1]


def add_route_command(subparsers) -> argparse.ArgumentParser:
    r = subparsers.add_parser(
        "route", help="route messages from one queue manager's runmqsc captures",
        description="Route one or many messages as the sending queue manager's CLWL algorithm would, from "
                    "its runmqsc (or MQ REST) captures.",
        epilog="profiles: " + "; ".join(f"{k}: {v}" for k, v in PROFILE_DOCS.items()))
    r.add_argument("--mqsc", action="append", required=True, metavar="PATH",
                   help="a capture file, or a folder whose files are all read (repeatable); a landing queue "
                        "manager folder <landing>/<YYYY-MM-DD>/<QM> gives its latest captures (docs/landing.md)")
    r.add_argument("--queue", required=True, metavar="QNAME", help="the cluster queue (or queue manager alias)")
    r.add_argument("--qmgr", metavar="QMNAME", help="the target queue manager the application names")
    r.add_argument("--local-qmgr", metavar="QMNAME", help="the sending queue manager (default: from the captures)")
    r.add_argument("--count", type=_positive, default=1, metavar="N", help="messages to route (default 1)")
    r.add_argument("--from-cluster-channel", action="store_true", help="the message arrived over a cluster channel")
    r.add_argument("--pcf", action="store_true", help="the message is a cluster PCF message")
    r.add_argument("--bind", choices=("notfixed", "open", "group", "asqdef"), default="notfixed",
                   help="notfixed: choose per message; open: once for all; group: once per group; asqdef: "
                        "MQOO_BIND_AS_Q_DEF, the DEFBIND of the alias, local queue or cluster queue the name "
                        "resolves through (--explain says which)")
    r.add_argument("--group-size", type=_positive, default=1, metavar="N", help="messages per group (--bind group)")
    r.add_argument("--size", type=_nonnegative, default=0, metavar="BYTES", help="message length (IGQ path)")
    r.add_argument("--algorithm", choices=sorted(PROFILES), default="default", metavar="PROFILE",
                   help="algorithm profile: " + ", ".join(sorted(PROFILES)) + " (default: default)")
    r.add_argument("--explain", action="store_true", help="print the step-by-step elimination")
    r.add_argument("--json", action="store_true", help="one JSON object per message")
    # Extensions (the contract allows more options).
    r.add_argument("--qsg-member", action="append", default=[], metavar="QMNAME",
                   help="a queue manager in the sending queue manager's queue-sharing group (IGQ path)")
    r.add_argument("--igq-max-size", type=_positive, default=None, metavar="BYTES",
                   help="largest message sent by intra-group queuing (default: from the captured "
                        f"{QSG_XMITQ} and its structure, else {IGQ_DEFAULT_MAX_MESSAGE})")
    r.add_argument("--no-logical-order", action="store_true",
                   help="with --bind group: groups are not put in logical order (MQPMO_LOGICAL_ORDER off)")
    AT.add(r)
    r.set_defaults(func=cmd_route)
    return r


def cmd_route(args: argparse.Namespace) -> int:
    for given in args.mqsc:  # a landing date folder: a queue manager that sends on --queue or hosts it, named
        refused = landing_folder_refusal("route", given, args.queue, args.local_qmgr)
        if refused:
            print(f"clwl route: {refused}", file=sys.stderr)
            return EXIT_INPUT
    try:
        caps = read_captures(args.mqsc, args.at, args.local_qmgr)
        local = local_qmgr_name(caps, args.local_qmgr)
    except InputError as e:
        say(f"clwl route: {e}", sys.stderr)
        return EXIT_INPUT
    view, view_problems = build_view(caps.records, local, args.qsg_member, args.igq_max_size)
    # A landing folder's other queue managers that show the same QSGNAME are in the group, as in the pipeline.
    siblings = {qm for qm, group in caps.sibling_groups.items() if group and group == view.qmgr.qsgname}
    if siblings - view.qsg_members:
        view = replace(view, qsg_members=view.qsg_members | (siblings - {local}))
    report_captures("route", caps, view_problems)
    gap = igq_evidence_gap(view)
    if gap:
        print(f"clwl route: warning: {gap}", file=sys.stderr)

    if args.qsg_member and not (view.qmgr.qsgname and view.qmgr.igq):  # the IGQ path needs both (004)
        missing = " and ".join(w for w, ok in (("QSGNAME", view.qmgr.qsgname), ("IGQ(ENABLED)", view.qmgr.igq))
                               if not ok)
        say(f"clwl route: warning: --qsg-member does nothing: {local}'s DISPLAY QMGR has no {missing}, so no "
            f"message takes the intra-group queuing path", sys.stderr)

    router = Router(view, args.algorithm)
    request = Request(queue=args.queue, target_qmgr=args.qmgr, from_cluster_channel=args.from_cluster_channel,
                      pcf=args.pcf, size=args.size)
    bind, decision = args.bind, None
    if args.bind == "asqdef":  # the router resolves AS_Q_DEF itself (as for put records); this names the definition
        decision = bind_decision(view, args.queue)
        bind = decision.bind
    results: list[Route | RouteError] = []
    logical = not args.no_logical_order
    for i in range(args.count):
        group = str(i // args.group_size) if bind == "group" else ""
        results.append(router.route(request, bind=AS_Q_DEF if decision else bind, handle="clwl-route",
                                    group_id=group, logical_order=logical, explain=args.explain))
    # A 2085 from captures without DISPLAY QCLUSTER output says which capture is missing; with it, the names the
    # captures do know (as clwl advise answers an unknown --queue).
    unknown = [i for i, r in enumerate(results) if isinstance(r, RouteError) and r.reason == _UNKNOWN_OBJECT]
    hint = unknown_object_hint(caps, local) or (known_queue_names(view) if unknown else "")
    for i in unknown if hint else ():
        results[i] = replace(results[i], detail=f"{results[i].detail}; {hint}")

    if args.json:
        out = sys.stdout
        for n, res in enumerate(results, 1):
            line = res.to_json(n, args.explain)
            if decision is not None:  # MQOO_BIND_AS_Q_DEF: the bind it resolved to, and with --explain from where
                line["bind"] = decision.bind
                if args.explain:
                    line["bind_source"] = decision.why
            out.write(json.dumps(line) + "\n")
    else:
        states = {c.name: c.state for c in view.channels}
        print_readable(results, args, local, results[unknown[0]] if hint and unknown else None, states, decision)
    return EXIT_UNROUTABLE if any(isinstance(r, RouteError) for r in results) else EXIT_OK


def print_readable(results: Sequence[Route | RouteError], args: argparse.Namespace, local: str,
                    missing_capture: RouteError | None = None, states: dict[str, str] | None = None,
                    bind: BindDecision | None = None) -> None:
    """The table of routes; ``states``: each channel's state as captured, shown beside the chosen channel, and a
    line for each chosen channel that is not moving messages now (its messages wait on the transmission queue);
    ``bind``: what ``--bind asqdef`` resolved to (with --explain, the definition that decided it)."""
    states = states or {}

    def w(line: str = "") -> None:  # one line, escaped: queue, channel and queue manager names are the captures'
        sys.stdout.write(printable(line) + "\n")

    w(f"Routing {args.count} message(s) to {args.queue}"
      + (f" at queue manager {args.qmgr}" if args.qmgr else "")
      + f" from {local} (profile {args.algorithm}, bind {args.bind}"
      + (f": {bind.bind}" if bind is not None else "") + ")")
    w()
    if bind is not None and args.explain:
        w(f"bind  MQOO_BIND_AS_Q_DEF -> {bind.bind}: {bind.why}")
        w()
    header = ("n", "qmgr", "channel", "state", "xmitq", "path", "decided_by", "reallocatable")
    rows = []
    waiting: dict[tuple[str, str, str], int] = {}  # (channel, state, xmitq) -> messages that wait there
    for n, r in enumerate(results, 1):
        if isinstance(r, RouteError):
            rows.append((str(n), f"{r.error} ({r.reason})", "", "", "", "", "", ""))
        else:
            realloc = "yes" if r.reallocatable else f"no ({r.not_reallocatable_reason})"
            state = states.get(r.channel, "INACTIVE") if r.channel else "-"
            if r.channel and state not in MOVING_STATES:
                key = (r.channel, state, r.xmitq or "-")
                waiting[key] = waiting.get(key, 0) + 1
            rows.append((str(n), r.qmgr, r.channel or "-", state, r.xmitq or "-", r.path, r.decided_by, realloc))
    head, *lines = aligned([header, *rows])
    if args.explain:
        for n, r in enumerate(results, 1):
            w(head)
            w(lines[n - 1])
            for t in r.trace or ():
                if t.step == "start":
                    w(f"    {'start':<5} {t.note or 'candidates'}: {', '.join(t.remaining)}")
                    continue
                if t.step == "note":
                    w(f"    {'note':<5} {t.rule}")
                    continue
                if t.eliminated:
                    w(f"    {t.step:<5} {t.rule}")
                    w(f"          eliminated {', '.join(t.eliminated)} -> remaining "
                      f"{', '.join(t.remaining) or '(none)'}")
                else:
                    w(f"    {t.step:<5} {t.rule}: nothing eliminated")
                if t.note:
                    w(f"          [{t.note}]")
            if isinstance(r, Route) and r.why_xmitq:
                w(f"    xmitq {r.why_xmitq}")
            if isinstance(r, RouteError) and r.detail:
                w(f"    error {r.detail}")
            w()
    else:
        w(head)
        for line in lines:
            w(line)
        if missing_capture is not None:  # the table has no room for details; this one names a missing capture
            w()
            w(f"{missing_capture.error} ({missing_capture.reason}): {missing_capture.detail}")
    for (channel, state, xmitq), k in sorted(waiting.items()):
        # Steps 6-9 chose it all the same (no better tier was left): MQ puts the message on the transmission
        # queue, where it waits until the channel runs, or until re-allocation moves it if it may be.
        w()
        w(f"{k} message(s) wait on {xmitq} until {channel} runs again (it is {state} in the captures)")
    if len(results) > 1:
        dist = Counter(r.qmgr for r in results if isinstance(r, Route))
        total = sum(dist.values())
        if total:
            w()
            w("Distribution:")
            for qm, k in sorted(dist.items()):
                w(f"  {printable(qm):<20} {k:>7}  {100 * k / total:5.1f}%  {'#' * round(40 * k / total)}")
