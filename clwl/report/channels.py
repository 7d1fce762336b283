"""Channels: the sending channels' state intervals over the run date (silver.channel_status), those in a state
messages wait behind first, with the stuck messages of each; a timeline chart of the channels with trouble and one
of the rest; and the transmission queue depth at each browse (silver.xmitq_contents), where browses exist."""

from __future__ import annotations

import datetime as dt
import logging

import pandas as pd

from clwl.engine.xmitq import igq_evidence_gap
from clwl.landing.evidence import CHSTATUS_INTERVAL, ChstatusGap, accounting_gaps, chstatus_gaps
from clwl.report.model import MAX_FINDINGS, Chart, Day, Report, hmm, png, table_view

log = logging.getLogger(__name__)

STATE_COLOURS = {
    "RUNNING": "#2e7d32", "INACTIVE": "#bdbdbd", "STOPPED": "#c62828", "RETRYING": "#ef6c00",
    "BINDING": "#fdd835", "INITIALIZING": "#fdd835", "STARTING": "#fdd835", "STOPPING": "#f9a825",
    "PAUSED": "#6a1b9a", "REQUESTING": "#8e24aa",
}
OTHER_STATE_COLOUR = "#757575"
HEALTHY_STATES = frozenset({"RUNNING", "INACTIVE"})  # the first tier of steps 6-9: nothing waits behind these


def channel_intervals(status: pd.DataFrame, day: dt.date) -> tuple[pd.DataFrame, str]:
    """The sending channels' state intervals clipped to the run date: label (sender → channel), state, start,
    end; from silver.channel_status's columns (clwl.report.read.CHANNEL_STATUS_COLS): observing_qmgr, channel,
    status, valid_from and valid_to (null: still in force), and chltype when the table has it (only the sending
    channels, CLUSSDR, are kept: they are the ones messages wait behind)."""
    if status.empty:
        return pd.DataFrame(), "no channel status rows for this run date"
    needed = ("observing_qmgr", "channel", "status", "valid_from", "valid_to")
    missing = [c for c in needed if c not in status.columns]
    if missing:
        return pd.DataFrame(), f"the channel status table lacks the columns {', '.join(missing)}"
    if "chltype" in status.columns and status["chltype"].astype(str).str.upper().str.contains("SDR").any():
        status = status[status["chltype"].astype(str).str.upper().str.contains("SDR")]
    day_start = pd.Timestamp(day, tz="UTC")
    day_end = day_start + pd.Timedelta(days=1)
    df = pd.DataFrame({
        "sending_qmgr": status["observing_qmgr"].astype(str),
        "channel": status["channel"].astype(str),
        "label": status["observing_qmgr"].astype(str) + " \u2192 " + status["channel"].astype(str),
        "state": status["status"].astype(str).str.upper(),
        "start": pd.to_datetime(status["valid_from"], utc=True),
        "end": pd.to_datetime(status["valid_to"], utc=True),
    }).dropna(subset=["start"]).sort_values(["label", "start"])
    df["end"] = df["end"].fillna(day_end)
    df = df[(df["end"] > day_start) & (df["start"] < day_end)].copy()
    if df.empty:
        return df, "no channel status intervals overlap this run date"
    df["start"] = df["start"].clip(lower=day_start)
    df["end"] = df["end"].clip(upper=day_end)
    return df.reset_index(drop=True), ""


def _timeline_chart(df: pd.DataFrame, day: dt.date, title: str, file: str) -> Chart:
    """One bar per channel across the run date, coloured by state; the legend outside the axes, at the right."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    day_start = pd.Timestamp(day, tz="UTC")
    labels = list(dict.fromkeys(df["label"]))
    fig = Figure(figsize=(10, 1.2 + 0.32 * len(labels)))
    ax = fig.subplots()
    hours = lambda t: (t - day_start).total_seconds() / 3600.0  # noqa: E731
    for y, label in enumerate(labels):
        rows = df[df["label"] == label]
        ax.broken_barh([(hours(a), max(hours(b) - hours(a), 0.01)) for a, b in zip(rows["start"], rows["end"])],
                       (y - 0.35, 0.7), facecolors=[STATE_COLOURS.get(s, OTHER_STATE_COLOUR) for s in rows["state"]])
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)  # first channel at the top
    ax.set_xlim(0, 24)
    ax.set_xticks(range(0, 25, 2))
    ax.set_xlabel(f"hour of {day.isoformat()} (UTC)")
    ax.set_ylabel("sending queue manager \u2192 channel")
    ax.set_title(title)
    seen = [s for s in STATE_COLOURS if s in set(df["state"])] + sorted(set(df["state"]) - set(STATE_COLOURS))
    ax.legend(handles=[Patch(color=STATE_COLOURS.get(s, OTHER_STATE_COLOUR), label=s) for s in seen],
              loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, title="state")
    ax.grid(axis="x", alpha=0.3)
    return Chart(title, png(fig), file, f"Timeline of channel states over the run date: {title.lower()}")


TROUBLE_COLS = ("sending_qmgr", "channel", "state", "start", "end", "duration", "stuck")

def stuck_per_interval(bad: pd.DataFrame, stuck: pd.DataFrame) -> tuple[list[int], dict[tuple[str, str], int]]:
    """Each bad interval's own stuck messages: a stuck message (its wait from held_from for age_seconds, or to
    the end of the day) counts in the one interval of its sending queue manager and channel it overlaps most
    (the earlier on a tie), so two windows of one channel never both show the channel's total. Also, per
    (sender, channel), the stuck messages no bad interval overlaps (the channel failed between captures)."""
    counts = [0] * len(bad)
    outside: dict[tuple[str, str], int] = {}
    if stuck.empty:
        return counts, outside
    starts = list(bad["start"])
    ends = list(bad["end"])
    by_channel: dict[tuple[str, str], list[int]] = {}
    for i, (s, c) in enumerate(zip(bad["sending_qmgr"], bad["channel"])):
        by_channel.setdefault((str(s), str(c)), []).append(i)
    held = pd.to_datetime(stuck["held_from"], utc=True)
    age = pd.to_timedelta(stuck["age_seconds"], unit="s")
    for s, c, a, w in zip(stuck["sending_qmgr"], stuck["channel"], held, age):
        b = a + w if not pd.isna(w) else pd.Timestamp.max.tz_localize("UTC")
        overlaps = [(min(b, ends[i]) - max(a, starts[i]), -i) for i in by_channel.get((str(s), str(c)), ())]
        best = max(overlaps, default=None)
        if best is None or best[0] <= pd.Timedelta(0):
            outside[(str(s), str(c))] = outside.get((str(s), str(c)), 0) + 1
        else:
            counts[-best[1]] += 1
    return counts, outside


def channel_trouble(intervals: pd.DataFrame, stuck: pd.DataFrame) -> tuple[pd.DataFrame, set[str]]:
    """The intervals in which a sending channel was in a state messages wait behind (not RUNNING or INACTIVE),
    each with its own stuck messages (:func:`stuck_per_interval`); and the labels of every channel with trouble
    (such an interval, or stuck messages). ``attrs["outside"]``: the stuck messages no interval holds."""
    if intervals.empty:
        out = pd.DataFrame(columns=TROUBLE_COLS)
        out.attrs["outside"] = {}
        return out, set()
    bad = intervals[~intervals["state"].isin(HEALTHY_STATES)].sort_values(["start", "label"]).reset_index(drop=True)
    bad["duration_seconds"] = (bad["end"] - bad["start"]).dt.total_seconds()
    bad["duration"] = bad["duration_seconds"].map(hmm)
    bad["stuck"], outside = stuck_per_interval(bad, stuck)
    bad.attrs["outside"] = outside
    labels = set(bad["label"])
    if not stuck.empty:
        labels |= {f"{s} \u2192 {c}" for s, c in zip(stuck["sending_qmgr"], stuck["channel"])}
    return bad, labels


def outside_note(outside: dict[tuple[str, str], int]) -> str:
    if not outside:
        return ""
    return ("Stuck while the channel status showed no trouble (the channel failed between captures): "
            + "; ".join(f"{s} \u2192 {c}: {n}" for (s, c), n in sorted(outside.items())) + ".")


XMITQ_COLS = ("observing_qmgr", "xmitq", "capture_time", "depth", "by_destination")

def xmitq_depth(contents: pd.DataFrame) -> pd.DataFrame:
    """Messages a browse saw on each transmission queue at each capture, with their destinations."""
    if contents.empty:
        return pd.DataFrame(columns=XMITQ_COLS)
    c = contents.assign(dest=contents.get("remote_qmgr_name", pd.Series("", index=contents.index)).fillna("?"))
    out = []
    for (qm, xq, t), g in c.groupby(["observing_qmgr", "xmitq", "capture_time"], dropna=False):
        by = g["dest"].value_counts()
        out.append(dict(observing_qmgr=qm, xmitq=xq, capture_time=pd.Timestamp(t), depth=len(g),
                        by_destination=", ".join(f"{d} {n}" for d, n in by.items())))
    return pd.DataFrame(out).sort_values(["observing_qmgr", "xmitq", "capture_time"]).reset_index(drop=True)


def _xmitq_chart(depth: pd.DataFrame, day: dt.date) -> Chart:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    day_start = pd.Timestamp(day, tz="UTC")
    fig = Figure(figsize=(10, 3.6))
    ax = fig.subplots()
    seen: list[float] = []
    for (qm, xq), g in depth.groupby(["observing_qmgr", "xmitq"]):
        hours = [(pd.Timestamp(t).tz_convert("UTC") - day_start).total_seconds() / 3600 for t in g["capture_time"]]
        seen += hours
        ax.plot(hours, g["depth"], marker="o", label=f"{qm}: {xq}")
    # The axis spans the browses (an hour either side, whole hours), not an empty day around one point.
    lo, hi = max(0, int(min(seen)) - 1), min(24, int(max(seen)) + 2)
    ax.set_xlim(lo, hi)
    ax.set_xticks(range(lo, hi + 1, 1 if hi - lo <= 8 else 2))
    ax.set_ylim(0, max(1, int(depth["depth"].max())) * 1.1)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(f"hour of {day.isoformat()} (UTC), at each browse")
    ax.set_ylabel("messages on the queue")
    ax.set_title("Transmission queue depth at each browse")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, title="queue manager: xmitq")
    ax.grid(alpha=0.3)
    return Chart("Transmission queue depth", png(fig), "xmitq_depth.png",
                  "Messages on each transmission queue at each browse over the run date")


def channels_section(day: Day, rep: Report) -> None:
    """Channels: trouble first, the rest collapsed."""
    rep.timeline_note = day.channel_note
    if day.channel_status is not None and not rep.timeline_note:
        try:
            intervals, rep.timeline_note = channel_intervals(day.channel_status, day.run_date)
            trouble, labels = channel_trouble(intervals, day.stuck_rows)
            rep.trouble_note = outside_note(trouble.attrs.get("outside", {}))
            rep.channel_trouble = table_view("channel-trouble", trouble, TROUBLE_COLS,
                                             "No sending channel was in a state messages wait behind.",
                                             keys={"duration": "duration_seconds"})
            if not intervals.empty:
                bad = intervals[intervals["label"].isin(labels)]
                rest = intervals[~intervals["label"].isin(labels)]
                if not bad.empty:
                    rep.timeline_trouble = _timeline_chart(bad.sort_values(["label", "start"]), day.run_date,
                                                           "Channels with trouble", "channel_states_trouble.png")
                if not rest.empty:
                    rep.timeline_rest = _timeline_chart(rest.sort_values(["label", "start"]), day.run_date,
                                                        "Other sending channels", "channel_states_other.png")
                    rep.timeline_rest_count = rest["label"].nunique()
        except Exception as exc:  # the timeline is optional; the rest of the report stands
            log.warning("report: channel state timeline skipped: %s", exc)
            rep.timeline_note = f"channel state timeline skipped: {exc}"
    elif not rep.timeline_note:
        rep.timeline_note = "no channel status table"


# ------------------------------------------------------------------------------------------------ evidence


def day_span(day: dt.date) -> tuple[dt.datetime, dt.datetime]:
    start = pd.Timestamp(day, tz="UTC").to_pydatetime()
    return start, start + dt.timedelta(days=1)


def chstatus_day_gaps(day: Day) -> list[ChstatusGap]:
    """The run date's channel status gaps (clwl.landing.evidence's rule, as ``clwl check`` and the ingest apply it): the
    capture times and each sender's puts of Day.seen; a sender with no capture has its whole day unseen."""
    if day.seen is None or not day.seen.chstatus_read:
        return []
    return chstatus_gaps(day.run_date.isoformat(), day.seen.chstatus, dict(day.seen.puts), CHSTATUS_INTERVAL,
                         day=day_span(day.run_date))


def receiver_hosts(day: Day) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Hosts of cluster queue instances in the configurations in force on the run date (host -> queues), and who
    shows them (host -> observing queue managers): what ``clwl check`` takes from the captures."""
    day_start, day_end = day_span(day.run_date)
    hosts: dict[str, set[str]] = {}
    seen_by: dict[str, set[str]] = {}
    for sender, snaps in (day.timelines or {}).items():
        in_force = [s for s in snaps if s.time < day_end]
        before = [s for s in in_force if s.time <= day_start]
        for snap in ([before[-1]] if before else []) + [s for s in in_force if s.time > day_start]:
            for inst in snap.view.instances:
                host = snap.view.local_name if inst.local else inst.qmgr
                hosts.setdefault(host, set()).add(inst.queue)
                seen_by.setdefault(host, set()).add(sender)
    return hosts, seen_by


def browse_evidence(day: Day) -> list[str]:
    """Messages a transmission queue browse found waiting although the channel status captures had their channel
    moving: the captures missed a failure between them. That is what the evidence lacked (the remedy: capture
    DISPLAY CHSTATUS more often), said here; why the messages stayed is their own cause, in the stuck section."""
    from clwl.analyses.remedies import remedy

    s = day.stuck_rows
    if s is None or s.empty or "observed_on_xmitq" not in s.columns:
        return []
    seen = s[s["observed_on_xmitq"].fillna(False).astype(bool)
             & (s["channel_state"].isna() | (s["channel_state"].astype(str) == ""))]
    out = []
    for (sender, channel), g in seen.groupby(["sending_qmgr", "channel"], sort=True):
        at = pd.to_datetime(g["seen_at"], utc=True).min() if "seen_at" in g.columns else pd.NaT
        n = len(g)
        text = remedy("between-captures", channel=channel,
                      seen=f"the {at:%H:%M} browse" if not pd.isna(at) else None)
        out.append(f"{sender}: {n} message{'s' if n != 1 else ''} {text}.")
    return out


def evidence_findings(day: Day, gaps: list[ChstatusGap]) -> list[str]:
    """What the report could not see: channel status gaps, receivers without accounting, quarantined records.
    Never silent: no coverage read, or no capture, is said as such, not taken for a healthy day."""
    d = day.run_date.isoformat()
    seen = day.seen
    if seen is None:
        return ["The evidence's coverage (channel status captures, queue accounting, quarantine) could not be read: "
                "what the report could not see is unknown, not nothing."] + browse_evidence(day)
    out = []
    minutes = int(CHSTATUS_INTERVAL.total_seconds() // 60)
    if not seen.chstatus_read:
        out.append("No channel status captures could be read (bronze.capture_files): every channel state in this "
                   "report is an assumption.")
    for g in gaps:
        if g.kind == "no_chstatus":
            out.append(f"{g.qmgr} put messages but has no channel status capture on {d}: its channel states all day "
                       "are assumed (an earlier capture, or DISPLAY CLUSQMGR's STATUS), not seen; the picture hatches "
                       "its whole day.")
        else:
            out.append(f"{g.qmgr}: no channel status capture from " + ", from ".join(u.text for u in g.unseen)
                       + f" (captures further apart than {minutes} min): a channel could have failed and recovered "
                       "unseen in between; the picture hatches these windows.")
    out += browse_evidence(day)
    for _sender, snaps in sorted((day.timelines or {}).items()):
        gap = next((g for s in snaps if (g := igq_evidence_gap(s.view))), "")
        if gap:
            out.append(gap[0].upper() + gap[1:] + ".")
    if seen.accounting is None:
        out.append("No queue accounting table: no receiver's counts to compare with the replay.")
    else:
        hosts, seen_by = receiver_hosts(day)
        for g in accounting_gaps(d, hosts, seen_by, seen.accounting):
            out.append(g.detail[0].upper() + g.detail[1:] + ".")
    q = seen.quarantine
    if q is not None and not q.empty:
        files = q.groupby("source_file")["records"].sum().sort_values(ascending=False)
        out.append(f"{int(q['records'].sum())} record{'s' if int(q['records'].sum()) != 1 else ''} quarantined from "
                   f"{len(files)} file{'s' if len(files) != 1 else ''}: "
                   + "; ".join(f"{f} ({n}: {', '.join(q[q['source_file'] == f]['reason'].astype(str).str[:80])})"
                               for f, n in files.head(MAX_FINDINGS).items())
                   + (f"; and {len(files) - MAX_FINDINGS} more files" if len(files) > MAX_FINDINGS else "")
                   + ". Their messages, captures or counts are not in the replay.")
    if not out:
        out.append(f"Nothing missing: channel status was captured at least every {minutes} min while each sender "
                   "put, every receiver has queue accounting, and no record was quarantined.")
    return out


QUARANTINE_COLS = ("source_file", "level", "reason", "records")


def evidence_section(day: Day, rep: Report) -> None:
    """What the report could not see, first in the findings after the incidents."""
    rep.findings_evidence = evidence_findings(day, chstatus_day_gaps(day))
    if day.seen is not None and not day.seen.quarantine.empty:
        rep.quarantine = table_view("quarantine", day.seen.quarantine.sort_values(["source_file", "reason"]),
                                    QUARANTINE_COLS, "Nothing quarantined.", wrap=("source_file", "reason"))


def xmitq_section(day: Day, rep: Report) -> None:
    """Transmission queue depth where browses exist."""
    rep.xmitq_note = day.xmitq_note
    if day.xmitq_contents is not None and not day.xmitq_contents.empty:
        depth = xmitq_depth(day.xmitq_contents)
        rep.xmitq_chart = _xmitq_chart(depth, day.run_date)
        rep.xmitq_table = table_view("xmitq", depth, XMITQ_COLS, "", wrap=("by_destination",))
    elif not rep.xmitq_note:
        rep.xmitq_note = "no transmission queue browse for this run date"
