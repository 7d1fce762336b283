"""``clwl advise``: CLWLWGHT values for a target share of one cluster queue (docs/advise.md).

The advice is clwl.analyses.advise's (the engine's shares, the search, what blocks a target); this module reads the
captures as ``clwl route`` does, prints the advice and, with ``--lake`` and ``--date``, the replay of that day.
Nothing is ever applied: the commands are text to review.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Optional

from clwl.cli.options import AT, DATE, LAKE_LOCATION, aligned, landing_folder_refusal, report_captures
from clwl.cli.task import LakeTask, TaskError
from clwl.engine.algorithm import PROFILES
from clwl.terminal import printable, say

EPILOG = """example:
  clwl advise --mqsc samples/landing/2026-11-20/QM1 --queue APP.ORDERS --target QM1=20,QM2=50,QM3=30

The shares are the engine's long-run shares with every channel running (step 12 deciding: weight over total
weight, exactly). Commands are printed to review, never run. See docs/advise.md."""


def add_advise_command(subparsers) -> argparse.ArgumentParser:
    a = subparsers.add_parser(
        "advise", help="propose CLWLWGHT values that bring a queue's shares to a target",
        description="Propose CLWLWGHT values (1-99) on the destinations' cluster receivers so that the sending\n"
                    "queue manager's long-run shares for one queue come as close to a target as whole weights\n"
                    "allow; show the shares the engine computes, the other queues that change, what weights\n"
                    "cannot do, and the runmqsc commands (never applied).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--mqsc", action="append", required=True, metavar="PATH",
                   help="the sending queue manager's captures: a file, or a folder whose files are all read "
                        "(repeatable); a landing queue manager folder <landing>/<YYYY-MM-DD>/<QM> gives its latest "
                        "captures (docs/landing.md)")
    a.add_argument("--queue", required=True, metavar="QNAME", help="the cluster queue")
    a.add_argument("--target", required=True, metavar="QM=PCT,...",
                   help="the share per destination queue manager in percent, adding up to 100, e.g. "
                        "QM2=50,QM3=25,QM4=25 (a queue manager hosting the queue and not named: 0)")
    a.add_argument("--local-qmgr", metavar="QMNAME", help="the sending queue manager (default: from the captures)")
    AT.add(a)
    a.add_argument("--algorithm", choices=sorted(PROFILES), default="default", metavar="PROFILE",
                   help="algorithm profile: " + ", ".join(sorted(PROFILES)) + " (default: default)")
    LAKE_LOCATION.add(a, help="with --date: also replay that day of this lake's real traffic with the proposed "
                              "weights (a what-if, in-process) and show the shares before and after; a folder, or "
                              "s3://bucket/prefix on an object store")
    DATE.add(a, help="the run date to replay (with --lake)")
    a.add_argument("--json", action="store_true", help="one JSON object")
    a.set_defaults(func=AdviseTask.main)
    return a


@dataclass
class Advised:
    """The advice, and the replay of the lake's day with it (None without --lake)."""

    advice: Any
    replayed: Optional[Any] = None


class AdviseTask(LakeTask):
    command = "advise"

    def check(self) -> None:
        from clwl.landing.layout import MQ_NAME_RULE, is_mq_name

        args = self.args
        if (args.lake is None) != (args.date is None):
            raise TaskError("--lake and --date go together: the replay needs both the lake and the day")
        if args.local_qmgr is not None and not is_mq_name(args.local_qmgr):
            raise TaskError(f"--local-qmgr: {_quoted(args.local_qmgr)} is not a valid MQ queue manager name "
                            f"({MQ_NAME_RULE})")

    def reads_lake(self) -> bool:
        return self.args.lake is not None  # checked before the advice is worked out: a wrong lake is one line at once

    def resolve_lake(self):
        lake = super().resolve_lake()
        if not lake.exists("silver.config_history"):
            raise TaskError(f"--lake: {lake} holds no silver.config_history (run clwl run on the landing first)")
        return lake

    def failures(self):
        from clwl.analyses.advise import AdviseError
        from clwl.parse.common import InputError

        return (AdviseError, InputError)

    def compute(self) -> Advised:
        from clwl.analyses.advise import AdviseError, advise, other_senders, parse_target
        from clwl.analyses.advise_replay import replayed_shares
        from clwl.engine.view import build_view, local_qmgr_name, read_captures
        from clwl.landing.layout import MQ_NAME_RULE, is_mq_name

        args, lake = self.args, self.lake
        for given in args.mqsc:  # a landing date folder: advise's own words, and a queue manager that sends or hosts
            refused = landing_folder_refusal("advise", given, args.queue, args.local_qmgr)
            if refused:
                raise TaskError(refused)
        target = parse_target(args.target)
        caps = read_captures(args.mqsc, args.at, args.local_qmgr)
        local = local_qmgr_name(caps, args.local_qmgr)
        if not is_mq_name(local):  # a folder's name, or a banner's: it goes into the runmqsc commands printed
            raise TaskError(f"the sending queue manager's name {_quoted(local)} (from the captures) is not a valid "
                            f"MQ queue manager name ({MQ_NAME_RULE}); name it with --local-qmgr")
        view, view_problems = build_view(caps.records, local)
        report_captures("advise", caps, view_problems)
        advice = advise(view, args.queue, target, args.algorithm)
        views, source = sibling_views(caps, args.at, local)
        if views is None and lake is not None:
            views, source = lake_views(lake, self.date, local)
        if views is not None:
            advice.other_senders = other_senders(views, advice.receiver_weights(), args.algorithm)
            advice.other_senders_from = source
        if lake is None:
            return Advised(advice)
        try:
            replayed = replayed_shares(lake, self.date, local, advice.queue, advice.weights(), args.algorithm,
                                       advice.target, advice.achieved)
        except AdviseError:  # a day without the sender's configuration or messages, said in advise's words
            raise
        except Exception as e:  # a lake that cannot be read: one line, not a traceback
            raise TaskError(f"--lake: {lake}: cannot replay {self.date}: {' '.join(str(e).split())[:300]}") from None
        return Advised(advice, replayed)

    def json_document(self, advised: Advised) -> dict:
        out = advised.advice.as_dict()
        if advised.replayed is not None:
            out["replay"] = advised.replayed.as_dict()
        return out

    def render_text(self, advised: Advised) -> None:
        print_advice(advised.advice, advised.replayed)


def _quoted(name: str) -> str:
    return f"'{printable(name)}'"


def sibling_views(caps, at, local: str):
    """The views of the other queue managers of a landing date folder, when ``--mqsc`` named one of its queue
    manager folders: each folder's captures as ``clwl route`` reads them (the same ``--at``). (None, "") when the
    captures are not a landing folder: the other senders are not known. A folder that cannot be read is left out
    and named."""
    from clwl.engine.view import build_view, is_landing_qmgr_folder, local_qmgr_name, read_captures
    from clwl.parse.common import InputError

    if not caps.landing:
        return None, ""
    given = caps.landing[0].folder
    views, unread = {}, []
    for sib in sorted(given.parent.iterdir()):
        if (sib.resolve() == given.resolve() or not sib.is_dir() or sib.name.startswith(".")
                or not is_landing_qmgr_folder(sib)):
            continue
        try:
            sc = read_captures([sib], at)
            name = local_qmgr_name(sc)
            if name != local:
                views[name] = build_view(sc.records, name)[0]
        except (InputError, OSError, ValueError) as e:
            unread.append(f"{sib.name} ({' '.join(str(e).split())[:160]})")
    source = (f"the captures of {', '.join(sorted(views)) or 'no other queue manager'} in "
              f"{caps.landing[0].folder.parent}" + (f" at {at.text}" if at is not None else " (their latest)")
              + (f"; not readable: {', '.join(unread)}" if unread else ""))
    return views, source


def lake_views(lake, date: str, local: str):
    """The other queue managers' configuration at the end of ``date`` in the lake (silver.config_history), when the
    captures are not a landing folder. (None, "") when the lake cannot give it."""
    from clwl.days import day_bounds
    from clwl.lake.silver import load_timelines

    try:
        timelines = load_timelines(lake, date)
    except Exception:  # the replay below says what is wrong with the lake
        return None, ""
    end = day_bounds(date)[1]
    views = {}
    for qmgr, tl in timelines.items():
        snaps = [sn for sn in tl if sn.time < end]
        if qmgr != local and snaps:
            views[qmgr] = max(snaps, key=lambda sn: sn.time).view
    return views, (f"the configuration of {', '.join(sorted(views)) or 'no other queue manager'} at the end of "
                   f"{date} in {lake}")


def _pct(x: float) -> str:
    return f"{x:6.2f}"


def print_advice(advice, replayed=None) -> None:
    w = say  # one line a call, escaped: queue and channel names come from the captures and the command line
    goal = ", ".join(f"{q} {v:g} %" for q, v in advice.target.items() if v > 0)
    w(f"Advice for {advice.queue} from {advice.sender} (profile {advice.profile}): target {goal}")
    w("")
    if advice.proposal:
        w("Proposed CLWLWGHT (each on the destination's cluster receiver; the sender uses what it advertises):")
        rows = [(p.qmgr, p.channel, str(p.current), str(p.clwlwght), "" if p.clwlwght != p.current else "unchanged")
                for p in advice.proposal]
        for line in aligned([("qmgr", "channel", "now", "proposed", ""), *rows], {2, 3}, "  "):
            w(line)
    else:
        w("No weights to propose: step 12 does not decide among several destinations (see below).")
    w("")
    how = ("exact: step 12 alone decides, weight over total weight" if advice.exact
           else "counted over the engine's routed messages")
    w(f"Shares of {advice.queue} from {advice.sender}, every channel running ({how}):")
    residual = advice.residual
    rows = [(q, _pct(advice.target.get(q, 0.0)), _pct(advice.current.get(q, 0.0)), _pct(advice.achieved.get(q, 0.0)),
             f"{residual[q]:+.2f}") for q in advice.destinations]
    for line in aligned([("qmgr", "target", "now", "proposed", "residual"), *rows], {1, 2, 3, 4}, "  "):
        w(line)
    w(f"  largest residual: {advice.max_residual:.2f} percentage points")
    if advice.blocked:
        w("")
        w("What weights alone cannot reach:")
        for b in advice.blocked:
            who = b.qmgr or "every destination"
            w(f"  {who} (step {b.step}, {b.kind}): {b.cause}")
            w(f"      instead: {b.remedy}")
    for note in advice.notes:
        w(f"  note: {note}")
    w("")
    if advice.side_effects:
        w(f"Other queues whose shares from {advice.sender} change (weights belong to channels, not queues):")
        for s in advice.side_effects:
            qs = sorted(set(s.before) | set(s.after))
            w(f"  {s.queue}: " + "; ".join(f"{q} {s.before.get(q, 0.0):.2f} -> {s.after.get(q, 0.0):.2f}"
                                           for q in qs))
    elif advice.changes:
        w(f"No other queue's shares from {advice.sender} change.")
    if advice.changes and advice.other_senders is None:
        w("Other senders: not known. Every queue manager that routes over a changed channel sees its new weight; "
          "give --mqsc a landing queue manager folder (<landing>/<date>/<QM>), or --lake and --date, to see their "
          "shares too.")
    elif advice.other_senders:
        w("")
        w("Other senders whose shares change (a cluster receiver advertises one CLWLWGHT to every sender; "
          f"{advice.other_senders_from}):")
        for e in advice.other_senders:
            qs = sorted(set(e.before) | set(e.after))
            over = f" (over {', '.join(e.channels)})" if e.channels else ""
            w(f"  {e.sender} {e.queue}{over}: " + "; ".join(
                f"{q} {e.before.get(q, 0.0):.2f} -> {e.after.get(q, 0.0):.2f}" for q in qs))
    elif advice.changes:
        w(f"No other sender's shares change ({advice.other_senders_from}).")
    if advice.changes:
        w("")
        w("Commands to review (not applied; each runs on the queue manager that owns the cluster receiver):")
        by_owner: dict[str, list[str]] = {}
        for p in advice.changes:
            by_owner.setdefault(p.owner, []).append(p.command)
        for owner, commands in sorted(by_owner.items()):
            w(f"  runmqsc {owner}:")
            for c in commands:
                w(f"    {c}")
    else:
        w("Nothing to change.")
    if replayed is not None:
        w("")
        w(f"Replayed {replayed.date}: {replayed.sender}'s {replayed.messages} message(s) to {replayed.queue}, "
          "where each ended the day, with the captured weights and with the proposed ones:")
        before, after = replayed.shares(replayed.before), replayed.shares(replayed.after)
        rows = [(q, str(replayed.before.get(q, 0)), _pct(before.get(q, 0.0)), str(replayed.after.get(q, 0)),
                 _pct(after.get(q, 0.0))) for q in sorted(set(before) | set(after))]
        for line in aligned([("qmgr", "before", "%", "after", "%"), *rows], {1, 2, 3, 4}, "  "):
            w(line)
        if replayed.unknown_channels:
            w(f"  note: the day's configuration has no channel {', '.join(replayed.unknown_channels)}: "
              "its proposed weight changed nothing in the replay")
        if replayed.away:
            print_why_away(replayed)


def print_why_away(replayed) -> None:
    """Why the replayed day with the proposal lands away from the target: the messages CLWL did not place freely,
    by cause, and the share the target reaches on the others."""
    from clwl.analyses.advise_replay import CAUSE_WORDS, REPLAY_CAUSES

    w = print
    free = replayed.free
    w(f"  it lands {replayed.gap():.2f} percentage points away from the target at most. Why, message by message "
      f"(of the {sum(replayed.after.values())}):")
    rows = [(str(replayed.causes[k]), k, CAUSE_WORDS[k]) for k, _ in REPLAY_CAUSES if replayed.causes[k]]
    rows.append((str(sum(free.values())), "free", "CLWL was free to place them: the rotation with the proposed "
                                                  "weights decided"))
    for line in aligned(rows, {0}, "    "):
        w(line)
    advised = replayed.expected
    for start, end, shares in replayed.periods:
        names = sorted(set(shares) | set(advised))
        w(f"    configuration {start:%H:%M}-{f'{end:%H:%M}' if end is not None else '24:00'}: long-run shares "
          + ", ".join(f"{q} {shares.get(q, 0.0):.2f}" for q in names) + " (the advice's: "
          + ", ".join(f"{q} {advised.get(q, 0.0):.2f}" for q in names) + ")")
    if free:
        got = replayed.shares(free)
        rows = [(q, _pct(replayed.target.get(q, 0.0)), str(free.get(q, 0)), _pct(got.get(q, 0.0)))
                for q in sorted(set(got) | set(replayed.target))]
        w("  on the messages CLWL was free to place, the target reaches:")
        for line in aligned([("qmgr", "target", "free", "%"), *rows], {1, 2, 3}, "    "):
            w(line)
