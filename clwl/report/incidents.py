"""The incidents at the top of the findings (clwl/analyses/incidents.py's rules over the day's channel trouble), and the
applications behind the stuck messages: the report's frames turned into the rules' plain records.

Trouble windows come from three places, so that a channel that failed between two status captures still counts:
silver.channel_status' intervals in a state messages wait behind (clwl.report.channels.channel_intervals), the
waits of the messages the replay held (routing_replay's held_from to released_at, or the end of the day), and the
stuck rows (gold.stuck_messages, a browse's sighting included: held_from plus its age)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Optional

import pandas as pd

from clwl.analyses.incidents import Delay, Incident, Trouble, counted, counts_text, incidents
from clwl.analyses.remedies import BY_KEY, single_instance, stay_cause
from clwl.engine.model import ClusterView
from clwl.report.channels import HEALTHY_STATES, channel_intervals
from clwl.report.model import Chart, Day, Report, hmm, png, table_view

INCIDENT_COLS = ("side", "look_at", "window", "channels", "queues", "applications", "delayed", "stuck",
                 "reallocated", "longest_wait")


def view_at(day: Day, sender: str, at: Any) -> Optional[ClusterView]:
    """The sender's configuration in force at ``at`` (None: no timelines; before the first capture: the first)."""
    snaps = (day.timelines or {}).get(sender) or []
    t = pd.Timestamp(at).to_pydatetime()
    found = [s for s in snaps if s.time <= t]
    return found[-1].view if found else (snaps[0].view if snaps else None)


def stuck_causes(day: Day) -> dict[str, str]:
    """msg_id -> the cause key (clwl.analyses.remedies) a stuck message stayed for."""
    out = {}
    for _, r in day.stuck_rows.iterrows():
        browse = (pd.isna(r.get("channel_state")) or not r.get("channel_state")) and bool(r.get("observed_on_xmitq"))
        key = stay_cause(r["why"], r["detail"], browse=browse,
                         single_instance=single_instance(view_at(day, r["sending_qmgr"], r["held_from"]), r["queue"]))
        if key:
            out[r["msg_id"]] = key
    return out


def bind_fixes(day: Day, causes: dict[str, str]) -> dict[str, str]:
    """msg_id -> the fix of a message bound on open, with its object named (clwl.analyses.remedies.pinned_by on the sender's
    configuration at its wait and the put's bind): where the object already has DEFBIND(NOTFIXED) and the
    application asked for MQOO_BIND_ON_OPEN, the fix is the application's alone."""
    from clwl.analyses.remedies import pinned_by

    bound = {m for m, k in causes.items() if k == "bind-on-open"}
    puts = day.puts
    if not bound or puts is None or puts.empty or "bind" not in puts.columns:
        return {}
    binds = dict(zip(puts["msg_id"], puts["bind"]))
    out = {}
    for _, r in day.stuck_rows[day.stuck_rows["msg_id"].isin(bound)].iterrows():
        view = view_at(day, r["sending_qmgr"], r["held_from"])
        if view is not None:
            out[r["msg_id"]] = pinned_by(binds.get(r["msg_id"]), view, str(r["queue"]))[1]
    return out


def why_they_stayed(inc: Incident, causes: dict[str, str], fixes: Optional[dict[str, str]] = None) -> str:
    """"Why they stayed, and what to do: bind on open 22 (orders-batch 11, billing-batch 11): MQOO_BIND_NOT_FIXED
    ...; ..." for an incident: each cause of its stuck messages with who put them and the remedy: the table's, or
    where the messages' own objects are known (``fixes``: bind on open), theirs."""
    stuck = [d for d in inc.delays if d.stuck and d.msg_id in causes]
    keys = counted(causes[d.msg_id] for d in stuck)
    if not keys:
        return ""
    fixes = fixes or {}

    def who(key: str) -> str:
        return counts_text(counted(d.application for d in stuck if causes[d.msg_id] == key))

    def fix(key: str) -> str:
        mine = sorted({fixes[d.msg_id] for d in stuck if causes[d.msg_id] == key and d.msg_id in fixes})
        return "; ".join(mine) if mine else BY_KEY[key].remedy

    return ("Why they stayed, and what to do: "
            + "; ".join(f"{BY_KEY[k].title} {n} ({who(k)}): {fix(k)}" for k, n in keys) + ".")


def _ts(v: Any) -> pd.Timestamp:
    return pd.Timestamp(v).tz_convert("UTC") if pd.Timestamp(v).tzinfo else pd.Timestamp(v).tz_localize("UTC")


def workload_channels(day: Day) -> dict[str, set[str]]:
    """Per sender, its cluster-sender channels to queue managers that host a cluster queue it can put to, in any
    of its configurations of the day (rule 2's "every channel"); without timelines, every sending channel the
    status table has for it."""
    out: dict[str, set[str]] = {}
    if day.timelines:
        for sender, snaps in day.timelines.items():
            for snap in snaps:
                hosts = {i.qmgr for i in snap.view.instances if not i.local}
                out.setdefault(sender, set()).update(c.name for c in snap.view.channels if c.qmgr in hosts)
        return out
    status = day.channel_status
    if status is not None and not status.empty and {"observing_qmgr", "channel"} <= set(status.columns):
        sdr = status[status["chltype"].astype(str).str.contains("SDR")] if "chltype" in status.columns else status
        for sender, channel in zip(sdr["observing_qmgr"], sdr["channel"]):
            out.setdefault(str(sender), set()).add(str(channel))
    return out


def _receivers(day: Day) -> dict[tuple[str, str], str]:
    """(sender, channel) -> the queue manager it leads to, from the configuration timelines."""
    out: dict[tuple[str, str], str] = {}
    for sender, snaps in (day.timelines or {}).items():
        for snap in snaps:
            for c in snap.view.channels:
                out.setdefault((sender, c.name), c.qmgr)
    return out


def _span_channel(row: pd.Series) -> str:
    """The channel a delayed message waited behind last: its final channel when it stayed (re-allocated to a
    channel not moving either, or never moved), its first when it was re-allocated away."""
    stayed = row.get("stay_reason") is not None and not pd.isna(row.get("stay_reason"))
    final = row.get("final_channel")
    return str(final) if stayed and final is not None and not pd.isna(final) else str(row["channel"])


def troubles_and_delays(day: Day) -> tuple[list[Trouble], list[Delay]]:
    """The day's trouble windows and delayed messages, as clwl.analyses.incidents takes them."""
    day_start = pd.Timestamp(day.run_date, tz="UTC")
    day_end = day_start + pd.Timedelta(days=1)
    receivers = _receivers(day)
    apps = application_by_msg(day)
    troubles: list[Trouble] = []
    if day.channel_status is not None and not day.channel_status.empty:
        intervals, _ = channel_intervals(day.channel_status, day.run_date)
        if not intervals.empty:
            bad = intervals[~intervals["state"].isin(HEALTHY_STATES)]
            for s, c, a, b in zip(bad["sending_qmgr"], bad["channel"], bad["start"], bad["end"]):
                troubles.append(Trouble(s, c, receivers.get((s, c), _guess_receiver(c)), a.to_pydatetime(),
                                        b.to_pydatetime()))
    delays: dict[tuple[str, str], Delay] = {}
    delayed = day.delayed if day.delayed is not None else pd.DataFrame()
    for _, r in delayed.iterrows():
        start = _ts(r["held_from"])
        released = r.get("released_at")
        end = _ts(released) if released is not None and not pd.isna(released) else day_end
        channel = _span_channel(r)
        qmgr = str(r["final_qmgr"] if channel == r.get("final_channel") and not pd.isna(r.get("final_qmgr"))
                   else r["qmgr"])
        troubles.append(Trouble(r["sending_qmgr"], channel, qmgr, start.to_pydatetime(), end.to_pydatetime()))
        stayed = r.get("stay_reason") is not None and not pd.isna(r.get("stay_reason"))
        delays[(r["sending_qmgr"], r["msg_id"])] = Delay(
            r["sending_qmgr"], channel, r["msg_id"], r["queue"], start.to_pydatetime(),
            (end - start).total_seconds(), stuck=stayed, reallocated=bool(r.get("reallocations") or 0) and not stayed,
            application=apps.get(r["msg_id"]))
    stuck = day.stuck_rows
    for _, r in stuck.iterrows():
        start = _ts(r["held_from"])
        age = r.get("age_seconds")
        end = start + pd.Timedelta(seconds=float(age)) if age is not None and not pd.isna(age) else day_end
        troubles.append(Trouble(r["sending_qmgr"], r["channel"], r["qmgr"], start.to_pydatetime(),
                                end.to_pydatetime()))
        delays[(r["sending_qmgr"], r["msg_id"])] = Delay(
            r["sending_qmgr"], r["channel"], r["msg_id"], r["queue"], start.to_pydatetime(),
            None if age is None or pd.isna(age) else float(age), stuck=True, application=apps.get(r["msg_id"]))
    return troubles, list(delays.values())


def day_troubles(day: Day) -> tuple[list[Trouble], list[Delay]]:
    """:func:`troubles_and_delays` of the day, made once per Day: the incidents and the picture both start from
    them, and at 10M messages they are a Python loop over every delayed message."""
    if "troubles" not in day.derived:
        day.derived["troubles"] = troubles_and_delays(day)
    return day.derived["troubles"]


def _guess_receiver(channel: str) -> str:
    """A channel without configuration: named after its receiver by the TO.<qmgr> convention, else itself."""
    return channel[3:] if channel.upper().startswith("TO.") else channel


def application_by_msg(day: Day) -> dict[str, str]:
    """msg_id -> its application (Day.puts), where known."""
    puts = day.puts
    if puts is None or puts.empty or "application" not in puts.columns:
        return {}
    known = puts[puts["application"].notna()]
    return dict(zip(known["msg_id"], known["application"]))


def day_incidents(day: Day) -> list[Incident]:
    """The day's incidents, each with its channels' transmission queues as the engine resolves them and whether its
    centre's own channel status was unseen during it (the evidence rule the picture hatches). Made once per Day
    (kept in ``Day.derived``): the incidents section and the picture both show them."""
    from clwl.report.channels import chstatus_day_gaps

    if "incidents" in day.derived:
        return day.derived["incidents"]
    troubles, delays = day_troubles(day)
    found = incidents(troubles, workload_channels(day), delays)
    unseen: dict[str, list] = {}
    for g in chstatus_day_gaps(day):
        unseen.setdefault(g.qmgr, []).extend(g.unseen)
    for inc in found:
        inc.xmitqs = channel_xmitqs(day, inc)
        if any(u.start < inc.end and inc.start < u.end for u in unseen.get(inc.subject, ())):
            inc.unseen = (inc.subject,)
    day.derived["incidents"] = found
    return found


def channel_xmitqs(day: Day, inc: Incident) -> dict[tuple[str, str], str]:
    """(sender, channel) -> the transmission queue its messages went to at the incident's start: the engine's
    resolution (clwl.engine.xmitq.channel_xmitq: a matching CLCHNAME, DEFCLXQ, the queue a running channel still uses) on
    the sender's configuration then; a channel the configuration does not show is left out."""
    from clwl.engine.xmitq import channel_xmitq

    out = {}
    for sender, channel in inc.channels:
        snaps = [s for s in (day.timelines or {}).get(sender, ()) if s.time <= inc.start] or \
            list((day.timelines or {}).get(sender, ()))[:1]
        if not snaps:
            continue
        view = snaps[-1].view
        ch = next((c for c in view.channels if c.name == channel), None)
        if ch is not None:
            out[(sender, channel)] = channel_xmitq(ch, view)[0]
    return out


def incident_findings(found: list[Incident], day: dt.date, causes: dict[str, str] | None = None,
                      fixes: dict[str, str] | None = None) -> list[str]:
    if not found:
        return [f"No channel trouble on {day.isoformat()}: no cluster-sender channel was in a state messages wait "
                "behind, and no message waited."]
    with_messages = [i for i in found if i.delays]
    quiet = [i for i in found if not i.delays]
    out = [f"{len(found)} incident{'s' if len(found) != 1 else ''} on {day.isoformat()}"
           + (f", {len(with_messages)} with messages waiting:" if quiet else ":")]
    number = {id(i): n for n, i in enumerate(found, 1)}  # as the picture numbers them
    out += [" ".join(p for p in (f"[{number[id(i)]}]", i.sentence, why_they_stayed(i, causes or {}, fixes)) if p)
            for i in with_messages]
    if quiet:
        out.append(f"{len(quiet)} more with no message waiting: "
                   + "; ".join(f"[{number[id(i)]}] " + i.headline.split(":", 1)[0] for i in quiet) + ".")
    return out


def verdict_lines(found: list[Incident], day: dt.date) -> list[str]:
    """The morning's answer in words, one line per incident numbered as in the picture; a day without channel
    trouble opens with its all-clear sentence (incident_findings' own)."""
    if not found:
        return incident_findings(found, day)
    return [f"[{n}] {i.verdict}" for n, i in enumerate(found, 1)]


def incident_frame(found: list[Incident]) -> pd.DataFrame:
    rows = []
    for i in found:
        rows.append(dict(side=i.side, look_at=i.look_at, window=f"{i.start:%H:%M}\u2013{i.end:%H:%M}",
                         channels=", ".join(f"{s} {c}" for s, c in i.channels), queues=", ".join(i.queues),
                         applications=counts_text(i.applications) if i.delays else "", delayed=i.delayed,
                         stuck=i.stuck, reallocated=i.reallocated, longest_wait=hmm(i.longest_wait),
                         longest_seconds=i.longest_wait))
    return pd.DataFrame(rows, columns=[*INCIDENT_COLS, "longest_seconds"])


def incidents_section(day: Day, rep: Report) -> None:
    """The incidents, first in the findings: which side to look at, and who was hit."""
    found = day_incidents(day)
    causes = stuck_causes(day)
    rep.findings_incidents = incident_findings(found, day.run_date, causes, bind_fixes(day, causes))
    rep.verdict = verdict_lines(found, day.run_date)
    rep.incidents = table_view("incidents", incident_frame(found), INCIDENT_COLS, "No incident.",
                               wrap=("look_at", "channels", "queues", "applications"),
                               keys={"longest_wait": "longest_seconds"})


# ------------------------------------------------------------------------------------------------ the picture


def waiting_steps(delays: list[Delay], day: dt.date) -> dict[str, list[tuple[pd.Timestamp, int]]]:
    """Per channel ("sender \u2192 channel"), the messages waiting on its transmission queue over the run date, as
    steps (time, messages waiting from then on): each delayed message waits from its held_from for its wait (the
    replay's held and released times; a stuck message without a known end, to the end of the day)."""
    day_start = pd.Timestamp(day, tz="UTC")
    day_end = day_start + pd.Timedelta(days=1)
    changes: dict[str, dict[pd.Timestamp, int]] = {}
    for d in delays:
        start = max(_ts(d.held_from), day_start)
        end = day_end if d.wait_seconds is None else min(_ts(d.held_from) + pd.Timedelta(seconds=d.wait_seconds),
                                                         day_end)
        if end <= start:
            continue
        at = changes.setdefault(f"{d.sender} \u2192 {d.channel}", {})
        at[start] = at.get(start, 0) + 1
        at[end] = at.get(end, 0) - 1
    out = {}
    for label in sorted(changes):
        n, steps = 0, [(day_start, 0)]
        for t in sorted(changes[label]):
            n += changes[label][t]
            steps.append((t, n))
        out[label] = steps
    return out


def _hours(t: Any, day_start: pd.Timestamp) -> float:
    return (_ts(t) - day_start).total_seconds() / 3600.0


def waiting_picture(day: Day, found: list[Incident], gaps: list[Any], delays: list[Delay]) -> Chart:
    """One picture of the day: messages waiting per channel (steps), the incidents shaded and numbered as in the
    findings, and below, per queue manager, its channel status captures as ticks with the unseen windows
    (clwl.landing.evidence's gaps) hatched, so thin evidence shows beside what it shows."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    day_start = pd.Timestamp(day.run_date, tz="UTC")
    steps = waiting_steps(delays, day.run_date)
    seen = day.seen
    qmgrs = sorted(set(seen.chstatus) | set(seen.puts)) if seen is not None else []
    if not steps and not found:  # a healthy day: its sentence says so; the picture keeps only what was seen
        fig = Figure(figsize=(11, 1.2 + 0.28 * len(qmgrs)), layout="constrained")
        top, bottom = None, fig.subplots(1, 1)
        bottom.set_title(f"Channel status captures, {day.run_date.isoformat()} (UTC): no message waited")
    else:
        fig = Figure(figsize=(11, 4.2 + 0.28 * len(qmgrs)), layout="constrained")
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, max(1, 0.35 * len(qmgrs))])
        _draw_waiting(top, steps, found, day, day_start)
    unseen = {}
    for g in gaps:
        unseen.setdefault(g.qmgr, []).extend(g.unseen)
    for y, q in enumerate(qmgrs):
        for u in unseen.get(q, ()):
            a, b = _hours(u.start, day_start), _hours(u.end, day_start)
            bottom.broken_barh([(a, b - a)], (y - 0.4, 0.8), facecolors="none", edgecolors="#9e9e9e", hatch="///",
                               linewidth=0.5)
        times = [_hours(t, day_start) for t in seen.chstatus.get(q, ())]
        bottom.plot(times, [y] * len(times), linestyle="none", marker="|", markersize=12, color="#212121")
        if not times:
            bottom.text(0.2, y, "no capture", va="center", fontsize=7, color="#c62828")
    bottom.set_yticks(range(len(qmgrs)))
    bottom.set_yticklabels(qmgrs)
    bottom.set_ylim(len(qmgrs) - 0.5 if qmgrs else 0.5, -0.5)
    bottom.set_ylabel("channel status")
    bottom.legend([plt_line("|"), Patch(facecolor="none", edgecolor="#9e9e9e", hatch="///")],
                  ["capture", "no capture for longer than the interval (unseen)"], loc="upper left",
                  bbox_to_anchor=(1.01, 1), fontsize=8)
    if seen is None:
        bottom.text(12, 0, "captures not read: coverage unknown", ha="center", va="center", color="#c62828")
    bottom.set_xlim(0, 24)
    bottom.set_xticks(range(0, 25, 2))
    bottom.set_xlabel(f"hour of {day.run_date.isoformat()} (UTC)")
    bottom.grid(axis="x", alpha=0.3)
    if top is None:
        return Chart("Channel status captures (no message waited)", png(fig), "messages_waiting.png",
                     "Channel status captures over the run date as ticks, unseen windows hatched; no message waited")
    return Chart("Messages waiting per channel", png(fig), "messages_waiting.png",
                 "Messages waiting per channel over the run date, incidents shaded, channel status captures as "
                 "ticks and unseen windows hatched")


def _draw_waiting(top: Any, steps: dict, found: list[Incident], day: Day, day_start: pd.Timestamp) -> None:
    """The upper panel: messages waiting per channel as steps, the incidents shaded and numbered."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    colours = [f"C{i}" for i in range(10) if i != 3]  # C3 is red: the incidents' colour
    for i, (label, st) in enumerate(steps.items()):
        top.step([_hours(t, day_start) for t, _ in st] + [24.0], [n for _, n in st] + [st[-1][1]], where="post",
                 color=colours[i % len(colours)], label=label, linewidth=1.6)
    for n, inc in enumerate(found, 1):
        a, b = _hours(inc.start, day_start), _hours(inc.end, day_start)
        top.axvspan(a, max(b, a + 0.05), color="#c62828", alpha=0.12, linewidth=0)
        top.text(a, 1.0, f" {n}", transform=top.get_xaxis_transform(), va="top", fontsize=8, color="#c62828")
    if not steps:
        top.text(12, 0.5, "no message waited on a transmission queue", ha="center", va="center", color="#616161")
    top.set_ylabel("messages waiting")
    top.set_ylim(bottom=0)
    top.yaxis.set_major_locator(MaxNLocator(integer=True))
    top.grid(alpha=0.3)
    handles, labels = top.get_legend_handles_labels()
    if found:
        handles.append(Patch(color="#c62828", alpha=0.12))
        labels.append("incident (numbered as in the findings)")
    if handles:
        # A message only a browse saw is known to wait until that browse, not after it: the legend says so.
        top.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8,
                   title="sender \u2192 channel\n(a message a browse saw\ncounts until the browse)")
    top.set_title(f"Messages waiting per channel, {day.run_date.isoformat()} (UTC)")


def plt_line(marker: str):
    from matplotlib.lines import Line2D

    return Line2D([], [], linestyle="none", marker=marker, markersize=10, color="#212121")


def picture_section(day: Day, rep: Report) -> None:
    """The one picture at the top of the findings."""
    from clwl.report.channels import chstatus_day_gaps

    _, delays = day_troubles(day)
    rep.picture = waiting_picture(day, day_incidents(day), chstatus_day_gaps(day), delays)


def applications_text(msg_ids: Any, apps: dict[str, str]) -> str:
    """"orders-api 11, orders-batch 2" for some messages."""
    return counts_text(counted(apps.get(m) for m in msg_ids))
