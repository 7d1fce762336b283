"""``clwl generate``: the command; the synthetic estate itself is written by clwl.generate."""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from clwl.cli.argtypes import iso_date, whole_number
from clwl.cli.exit_codes import EXIT_INPUT, EXIT_OK
from clwl.generate import GenerateOptions

_DAY_DIR = re.compile(r"\d{4}-\d{2}-\d{2}")


def _rate(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= x <= 1000:
        raise argparse.ArgumentTypeError(f"{x} must be between 0 and 1000")
    return x


def _share(text: str) -> float:
    x = _rate(text)
    if x > 1:
        raise argparse.ArgumentTypeError(f"{x} is a share: between 0 and 1")
    return x


def _factor(text: str) -> float:
    x = _rate(text)
    if x <= 0 or x == 1:
        raise argparse.ArgumentTypeError("the skew factor must be positive and not 1")
    return x


def add_generate_command(subparsers) -> argparse.ArgumentParser:
    d = GenerateOptions(out="")
    g = subparsers.add_parser(
        "generate", help="write a synthetic estate (captures, puts, browses, accounting) into a landing folder",
        description="Write a synthetic IBM MQ cluster estate into a landing folder, in the layout and formats of "
                    "samples/landing, routed by an independent simulation of the CLWL algorithm. Deterministic "
                    "from --seed. Ground truth in <out>/_generate.json. Event options are rates per day "
                    "(a fraction is a chance); share options are fractions of all messages.")
    g.add_argument("--out", required=True, metavar="DIR", help="landing folder to write")
    g.add_argument("--seed", type=int, default=d.seed, help=f"random seed (default {d.seed})")
    g.add_argument("--qmgrs", type=whole_number(5), default=d.qmgrs, metavar="N",
                   help=f"queue managers, 2 full repositories included (default {d.qmgrs})")
    g.add_argument("--clusters", type=whole_number(1), default=d.clusters, metavar="N",
                   help=f"clusters (default {d.clusters})")
    g.add_argument("--queues", type=whole_number(1), default=d.queues, metavar="N",
                   help=f"cluster queues (default {d.queues})")
    g.add_argument("--instances", type=whole_number(1), default=d.instances, metavar="N",
                   help=f"instances per queue (default {d.instances})")
    g.add_argument("--senders", type=whole_number(1), default=d.senders, metavar="N",
                   help=f"sending queue managers, the ones with puts (default {d.senders})")
    g.add_argument("--days", type=whole_number(1), default=d.days, metavar="N", help=f"days (default {d.days})")
    g.add_argument("--start-date", type=iso_date, default=d.start_date, metavar="YYYY-MM-DD",
                   help=f"first day (default {d.start_date.isoformat()})")
    g.add_argument("--messages-per-day", type=whole_number(0), default=d.messages_per_day, metavar="N",
                   help=f"messages put per day, all senders together (default {d.messages_per_day})")
    g.add_argument("--outages", type=_rate, default=d.outages, metavar="RATE",
                   help=f"channel outages (RETRYING periods) per day (default {d.outages})")
    g.add_argument("--suspends", type=_rate, default=d.suspends, metavar="RATE",
                   help=f"queue managers suspended from the cluster, per day (default {d.suspends})")
    g.add_argument("--weight-changes", type=_rate, default=d.weight_changes, metavar="RATE",
                   help=f"CLUSRCVR CLWLWGHT changes per day (default {d.weight_changes})")
    g.add_argument("--priority-changes", type=_rate, default=d.priority_changes, metavar="RATE",
                   help=f"channel or queue CLWLPRTY periods per day (default {d.priority_changes})")
    g.add_argument("--put-disabled", type=_rate, default=d.put_disabled, metavar="RATE",
                   help=f"PUT(DISABLED) periods of one instance per day (default {d.put_disabled})")
    g.add_argument("--partitions", type=_rate, default=d.partitions, metavar="RATE",
                   help=f"partitions per day: one sender's channels to all hosts of a queue retry, one comes back "
                        f"first, waiting messages are re-allocated (default {d.partitions:g})")
    g.add_argument("--bind-open-share", type=_share, default=d.bind_open_share, metavar="F",
                   help=f"share of messages put through bind-on-open handles (default {d.bind_open_share})")
    g.add_argument("--bind-group-share", type=_share, default=d.bind_group_share, metavar="F",
                   help=f"share of messages in bind-on-group groups, 85%% with logical order "
                        f"(default {d.bind_group_share})")
    g.add_argument("--named-qmgr-share", type=_share, default=d.named_qmgr_share, metavar="F",
                   help=f"share of messages that name their target queue manager (default {d.named_qmgr_share})")
    g.add_argument("--skew", type=whole_number(0), default=d.skew, metavar="N",
                   help=f"injected accounting skews (one receiver, queue and interval each; default {d.skew})")
    g.add_argument("--skew-factor", type=_factor, default=None, metavar="F",
                   help="factor of every skew (default: 0.5 and 1.6 alternately)")
    g.add_argument("--broken-records", type=whole_number(0), default=d.broken_records, metavar="N",
                   help="broken records to inject, in turn: truncated capture, unbalanced parenthesis, bad hex "
                        f"token, file in no known format, short token (default {d.broken_records})")
    g.add_argument("--rest-qmgrs", type=whole_number(0), default=d.rest_qmgrs, metavar="N",
                   help=f"back ends whose configuration is captured as MQ REST JSON (default {d.rest_qmgrs})")
    g.add_argument("--observed-every", type=whole_number(1), default=d.observed_every, metavar="N",
                   help=f"fill observed_* in every Nth put row (default {d.observed_every})")
    g.add_argument("--browse-cap", type=whole_number(1), default=d.browse_cap, metavar="N",
                   help=f"most messages written to one transmission queue browse (default {d.browse_cap})")
    g.add_argument("--puts-format", choices=("csv", "activity-trace"), default=d.puts_format,
                   help="how the puts are written: csv (puts.csv, the default) or activity-trace "
                        "(<QM>.<date>.amqsact, the output of IBM's sample amqsact -v: MQOPEN, MQPUT at trace level "
                        "MEDIUM (HIGH for the batch application), MQCLOSE, with MQ's resolved queue manager and "
                        "transmission queue as the simulation chose them; see docs/activity-trace.md)")
    g.add_argument("--trace-disagreements", type=whole_number(0), default=None, metavar="N",
                   help="with --puts-format activity-trace: traced puts whose Resolved_Q_mgr is made another queue "
                        "manager than the simulation's, listed in _generate.json trace_disagreements (default 3)")
    g.add_argument("--channel-trace", action="store_true",
                   help="also write the channel agents' activity trace, per queue manager and day "
                        "<QM>.<date>.channels.amqsact: the cluster-sender agents' MQGETs from the transmission queues "
                        "(when each message left) and, with --channel-trace-ends both, the cluster-receiver agents' "
                        "MQPUTs (when it arrived), at MEDIUM, with the simulation's times (see docs/activity-trace.md, 'Channel agents')")
    g.add_argument("--trace-format", choices=("amqsact", "json"), default=d.trace_format,
                   help="how the traces are printed: amqsact (amqsact -v, the default) or json (amqsevt -o "
                        "json_compact, files *.amqsevt.jsonl)")
    g.add_argument("--channel-trace-ends", choices=("sending", "both"), default=d.channel_trace_ends,
                   help="with --channel-trace: sending (the cluster-sender agents' MQGETs, the default) or both "
                        "(and the cluster-receiver agents' MQPUTs on the receiving queue managers: when each message "
                        "arrived)")
    g.add_argument("--channel-stops", type=whole_number(0), default=None, metavar="N",
                   help="with --channel-trace: cluster-sender channels that stop after one status capture of their "
                        "sending queue manager and restart before the next (the captures never show it); what is "
                        "put to them meanwhile leaves at the restart; listed in _generate.json channel_stops "
                        "(default 2)")
    g.add_argument("--trace-gets", action="store_true",
                   help="with --puts-format activity-trace --channel-trace --channel-trace-ends both: also the "
                        "consumers' MQGETs of the destination queues (<QM>.<date>.consumers.amqsact), each queue "
                        "manager's queue statistics with QMinDepth/QMaxDepth (statistics.amqsmon) and, in "
                        "_generate.json, every queue's depth after each change (see docs/depth.md)")
    g.add_argument("--qsg", type=whole_number(0), default=d.qsg, metavar="N",
                   help="N queue managers (sending ones first, then back ends that host instances) are z/OS members "
                        "of one queue-sharing group, QSG1, captured as CSQUTIL output (config_HHMMSS.txt, "
                        "chstatus_HHMMSS.txt: DISPLAY QMGR with QSGNAME and IGQ, DISPLAY GROUP, DISPLAY CFSTRUCT, "
                        "SYSTEM.QSG.TRANSMIT.QUEUE); IGQ ENABLED on some, DISABLED on at least one; message "
                        "lengths around the IGQ limit; a sending member with IGQ(ENABLED) sends what fits to "
                        "another member over intra-group queuing (default 0: no group)")
    g.add_argument("--qsg-cflevel", type=int, choices=range(1, 6), default=d.qsg_cflevel, metavar="1-5",
                   help=f"with --qsg: CFLEVEL of the structure that holds SYSTEM.QSG.TRANSMIT.QUEUE: 1-3 take "
                        f"messages up to 63 KB (64,512 bytes), 4 and 5 up to 100 MB (offloaded to Db2, at 5 to "
                        f"SMDS) (default {d.qsg_cflevel}, as IBM's example)")
    g.add_argument("--qsg-maxmsgl", type=whole_number(429), default=None, metavar="BYTES",
                   help="with --qsg: MAXMSGL of SYSTEM.QSG.TRANSMIT.QUEUE (default: the structure's largest "
                        "message); the IGQ limit is the smaller of the two less the 428-byte MQXQH")
    g.add_argument("--qsg-igq-changes", type=_rate, default=d.qsg_igq_changes, metavar="RATE",
                   help=f"with --qsg: a sending member's IGQ switched per day, effective from the capture that "
                        f"shows it (default {d.qsg_igq_changes:g})")
    g.add_argument("--event", dest="events", action="append", default=[], metavar="DAY:KIND[:ARGS]",
                   help="a planned event on one day (repeatable); DAY is the day's number (1 = --start-date) or its "
                        "date YYYY-MM-DD; KIND[:ARGS] one of weight[:QMGR[=VALUE]] (CLWLWGHT of QMGR's cluster "
                        "receivers, from that day on), outage[:QMGR[@HHMM-HHMM]] (QMGR unreachable for the window, "
                        "default 1000-1200), disable[:QUEUE@QMGR] (PUT(DISABLED) on that instance from that day on), "
                        "bind-on-open[:APPLICATION] (a service application, <sender>-svc, opens its queues with "
                        "MQOO_BIND_ON_OPEN from that day on); what is left out is chosen from --seed; listed in "
                        "_generate.json planned_events (README: 'A synthetic estate at your scale')")
    g.add_argument("--no-unresolved-outage", dest="unresolved_outage", action="store_false",
                   help="let the last outage end (by default it is still going at the end of the estate)")
    g.add_argument("--force", action="store_true",
                   help="replace an existing landing folder's day folders and _generate.json")
    g.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    g.set_defaults(func=cmd_generate)
    return g


def options_from_args(args: argparse.Namespace) -> GenerateOptions:
    return GenerateOptions(
        out=args.out, seed=args.seed, qmgrs=args.qmgrs, clusters=args.clusters, queues=args.queues,
        instances=args.instances, senders=args.senders, days=args.days, start_date=args.start_date,
        messages_per_day=args.messages_per_day, outages=args.outages, suspends=args.suspends,
        weight_changes=args.weight_changes, priority_changes=args.priority_changes, put_disabled=args.put_disabled,
        bind_open_share=args.bind_open_share, bind_group_share=args.bind_group_share,
        named_qmgr_share=args.named_qmgr_share, skew=args.skew, skew_factor=args.skew_factor,
        broken_records=args.broken_records, rest_qmgrs=args.rest_qmgrs, observed_every=args.observed_every,
        browse_cap=args.browse_cap, unresolved_outage=args.unresolved_outage, force=args.force, quiet=args.quiet,
        partitions=args.partitions, puts_format=args.puts_format, trace_disagreements=args.trace_disagreements,
        channel_trace=args.channel_trace, trace_format=args.trace_format, channel_stops=args.channel_stops,
        channel_trace_ends=args.channel_trace_ends, qsg=args.qsg, qsg_cflevel=args.qsg_cflevel,
        qsg_maxmsgl=args.qsg_maxmsgl, qsg_igq_changes=args.qsg_igq_changes, events=tuple(args.events),
        trace_gets=args.trace_gets)


def cmd_generate(args: argparse.Namespace) -> int:
    from clwl.generate import generate
    from clwl.generate.build import build_estate
    from clwl.generate.estate import EstateError
    from clwl.terminal import say  # --out is the user's

    o = options_from_args(args)
    if o.bind_open_share + o.bind_group_share + o.named_qmgr_share > 1:
        print("clwl generate: the three shares add up to more than 1", file=sys.stderr)
        return EXIT_INPUT
    if o.trace_disagreements and o.puts_format != "activity-trace":
        print("clwl generate: --trace-disagreements needs --puts-format activity-trace", file=sys.stderr)
        return EXIT_INPUT
    if o.channel_trace_ends != "sending" and not o.channel_trace:
        print("clwl generate: --channel-trace-ends needs --channel-trace", file=sys.stderr)
        return EXIT_INPUT
    if o.channel_stops and not o.channel_trace:
        print("clwl generate: --channel-stops needs --channel-trace", file=sys.stderr)
        return EXIT_INPUT
    if o.trace_format != "amqsact" and not (o.channel_trace or o.puts_format == "activity-trace"):
        print("clwl generate: --trace-format needs --channel-trace or --puts-format activity-trace", file=sys.stderr)
        return EXIT_INPUT
    if o.trace_gets and not (o.puts_format == "activity-trace" and o.channel_trace and o.channel_trace_ends == "both"):
        print("clwl generate: --trace-gets needs --puts-format activity-trace --channel-trace --channel-trace-ends "
              "both (every arrival traced)", file=sys.stderr)
        return EXIT_INPUT
    if o.trace_gets and (o.trace_disagreements or o.partitions):
        print("clwl generate: --trace-gets needs --trace-disagreements 0 and --partitions 0 (the depth truth follows "
              "each message from its traced put)", file=sys.stderr)
        return EXIT_INPUT
    if not o.qsg and (o.qsg_cflevel != GenerateOptions.qsg_cflevel or o.qsg_maxmsgl is not None
                      or o.qsg_igq_changes):
        print("clwl generate: --qsg-cflevel, --qsg-maxmsgl and --qsg-igq-changes need --qsg", file=sys.stderr)
        return EXIT_INPUT
    if o.qsg and (o.puts_format != "csv" or o.channel_trace):
        print("clwl generate: --qsg needs --puts-format csv and no --channel-trace (z/OS queue managers have no "
              "amqsact activity trace)", file=sys.stderr)
        return EXIT_INPUT
    try:  # the estate is built once before anything is written or replaced: bad options, --event among them
        build_estate(o)
    except EstateError as e:
        say(f"clwl generate: {e}", sys.stderr)
        return EXIT_INPUT
    out = Path(o.out)
    if out.exists() and not out.is_dir():
        say(f"clwl generate: {out}: not a folder", sys.stderr)
        return EXIT_INPUT
    if out.is_dir() and any(out.iterdir()):
        ours = [p for p in out.iterdir() if (p.is_dir() and _DAY_DIR.fullmatch(p.name)) or p.name == "_generate.json"]
        if not o.force:
            say(f"clwl generate: {out}: folder is not empty (use --force to replace its day folders and "
                f"_generate.json)", sys.stderr)
            return EXIT_INPUT
        for p in ours:
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    try:
        generate(o)
    except EstateError as e:
        say(f"clwl generate: {e}", sys.stderr)
        return EXIT_INPUT
    return EXIT_OK
