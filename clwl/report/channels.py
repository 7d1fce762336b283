"""Channels: the sending channels' state intervals over the run date (silver.channel_status), those in a state
messages wait behind first, with the stuck messages of each; a timeline chart of the channels with trouble and one
of the rest; and the transmission queue depth at each browse (silver.xmitq_contents), where browses exist."""

from __future__ import annotations

import datetime as dt
import logging

import pandas as pd

from clwl.report.model import Chart, Day, Report, hmm, png, table_view

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

def channel_trouble(intervals: pd.DataFrame, stuck: pd.DataFrame) -> tuple[pd.DataFrame, set[str]]:
    """The intervals in which a sending channel was in a state messages wait behind (not RUNNING or INACTIVE),
    with the stuck messages of that channel; and the labels of every channel with trouble (such an interval,
    or stuck messages)."""
    if intervals.empty:
        return pd.DataFrame(columns=TROUBLE_COLS), set()
    bad = intervals[~intervals["state"].isin(HEALTHY_STATES)].copy()
    per_channel = (stuck.groupby(["sending_qmgr", "channel"]).size() if not stuck.empty
                   else pd.Series(dtype=int))
    bad["duration_seconds"] = (bad["end"] - bad["start"]).dt.total_seconds()
    bad["duration"] = bad["duration_seconds"].map(hmm)
    bad["stuck"] = [int(per_channel.get((s, c), 0)) for s, c in zip(bad["sending_qmgr"], bad["channel"])]
    labels = set(bad["label"])
    if not stuck.empty:
        labels |= {f"{s} \u2192 {c}" for s, c in zip(stuck["sending_qmgr"], stuck["channel"])}
    return bad.sort_values(["start", "label"]).reset_index(drop=True), labels


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
    for (qm, xq), g in depth.groupby(["observing_qmgr", "xmitq"]):
        hours = [(pd.Timestamp(t).tz_convert("UTC") - day_start).total_seconds() / 3600 for t in g["capture_time"]]
        ax.plot(hours, g["depth"], marker="o", label=f"{qm}: {xq}")
    ax.set_xlim(0, 24)
    ax.set_xticks(range(0, 25, 2))
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


def xmitq_section(day: Day, rep: Report) -> None:
    """Transmission queue depth where browses exist."""
    rep.xmitq_note = day.xmitq_note
    if day.xmitq_contents is not None and not day.xmitq_contents.empty:
        depth = xmitq_depth(day.xmitq_contents)
        rep.xmitq_chart = _xmitq_chart(depth, day.run_date)
        rep.xmitq_table = table_view("xmitq", depth, XMITQ_COLS, "", wrap=("by_destination",))
    elif not rep.xmitq_note:
        rep.xmitq_note = "no transmission queue browse for this run date"
