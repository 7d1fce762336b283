"""The stuck messages: the findings' first sentences (per sending queue manager, channel and outage window,
with the reasons counted), the groups (channel, window, reason: how many, the oldest, what released them or
would, one message to explain), and every row behind a disclosure."""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable

import pandas as pd

from clwl.analyses.remedies import alias_note, pinned_by, remedy, single_instance, stay_cause, step_of
from clwl.report.incidents import application_by_msg, applications_text, view_at
from clwl.report.model import MAX_FINDINGS, Day, Report, clock, hmm, table_view

# What a not-reallocatable reason means, in words (clwl.engine.replay's not_reallocatable_reason values).
BOUND_BY = {
    "bind-on-open": "opened with bind on open",
    "bind-on-group": "part of a message group",
    "named-qmgr": "put to a named queue manager",
}


def _reason(row: pd.Series) -> str:
    head = str(row["detail"] or "").split(";")[0].strip() if not pd.isna(row["detail"]) else ""
    if _missed(row):
        return f"on the transmission queue after the replay delivered it ({head or row['why']})"
    if row["why"] == "not-reallocatable":
        return f"not re-allocatable: {head}" if head else "not re-allocatable"
    if row["why"] == "still-most-favourable":
        return f"still the most favourable: {head}" if head else "still the most favourable"
    return f"{row['why']}: {head}" if head else str(row["why"])


def _missed(row: pd.Series) -> bool:
    """A row from a browse: seen on a transmission queue although the replay had it delivered (no hold state)."""
    return (pd.isna(row.get("channel_state")) or not row.get("channel_state")) and bool(row.get("observed_on_xmitq"))


def browse_seen(rows: pd.DataFrame) -> pd.Series:
    """When a browse saw each row's message waiting: stuck_messages.seen_at; in rows published before that column, a
    browse-only row's held_from + age_seconds (its age ran to the browse). NaT where no browse saw it."""
    derived = (rows["held_from"] + pd.to_timedelta(rows["age_seconds"], unit="s")).where(
        rows["released_at"].isna() & rows["observed_on_xmitq"].fillna(False).astype(bool))
    if "seen_at" in rows.columns:
        return pd.to_datetime(rows["seen_at"], utc=True).where(rows["seen_at"].notna(), derived)
    return derived


def _traced(group: pd.DataFrame) -> bool:
    """The channel agents' trace saw every message of the group leave (its release is the trace's)."""
    return bool(group["released_at"].notna().all()) and "timing_source" in group.columns and bool(
        (group["timing_source"] == "channel agent trace").all())


def _release(group: pd.DataFrame) -> str:
    """What released the group's messages, or what would."""
    first = group.iloc[0]
    channel, qmgr, queue = first["channel"], first["qmgr"], first["queue"]
    if _missed(first):
        seen = browse_seen(group).max()
        if group["released_at"].notna().all():
            return (f"left the transmission queue at {clock(group['released_at'].max())} (the channel agents' trace)"
                    + (f"; a browse at {clock(seen)} had seen them waiting" if not pd.isna(seen) else "")
                    + f" ({channel} failed between status captures)")
        return (f"{channel} running again: a browse at {clock(seen)} still had them on the transmission queue "
                "(the channel failed between status captures)")
    released = group["released_at"]
    if released.notna().all():
        last = released.max()
        return f"released at {clock(last)} when {channel} ran again"
    if first["why"] == "not-reallocatable":
        head = str(first["detail"] or "").split(";")[0].strip()
        return (f"only {channel} running again: {BOUND_BY.get(head, head)}, they stay bound to {qmgr}"
                if head else f"only {channel} running again")
    return (f"{channel} running again, or another instance of {queue} becoming more favourable than {qmgr} "
            "(they are re-allocated when it does)")


def _released(group: pd.DataFrame) -> str:
    """When the group's messages left the transmission queue, as far as the data says."""
    if _missed(group.iloc[0]):  # not a wait in the replay: the browse saw them, the trace may have seen them leave
        seen = browse_seen(group).max()
        if group["released_at"].notna().all():
            return (f"{clock(group['released_at'].max())} (channel agents' trace)"
                    + (f"; seen waiting by the {clock(seen)} browse" if not pd.isna(seen) else ""))
        return f"unknown: still on the queue at {clock(seen)} (browse)"
    if group["released_at"].isna().any():
        return STILL_WAITING
    return clock(group["released_at"].max())


STILL_WAITING = "still waiting at the end of the day"

def _windows(stuck: pd.DataFrame, day_end: pd.Timestamp) -> pd.Series:
    """Per row, the outage window it belongs to: the union of overlapping [held_from, held_from + age] spans of
    its (sending queue manager, channel), as "HH:MM-HH:MM"."""
    spans = pd.DataFrame({
        "key": stuck["sending_qmgr"].astype(str) + "\0" + stuck["channel"].astype(str),
        "start": stuck["held_from"],
        "end": (stuck["held_from"] + pd.to_timedelta(stuck["age_seconds"].fillna(0), unit="s")).fillna(day_end),
    }, index=stuck.index).sort_values(["key", "start"])
    label = pd.Series("", index=stuck.index)
    for _, part in spans.groupby("key", sort=False):
        members: list[Any] = []
        w_start = w_end = None
        for idx, s, e in zip(part.index, part["start"], part["end"]):
            if w_end is not None and s > w_end:
                label[members] = f"{clock(w_start)}\u2013{clock(w_end)}"
                members = []
                w_start = w_end = None
            members.append(idx)
            w_start = s if w_start is None else w_start
            w_end = e if w_end is None else max(w_end, e)
        if members:
            label[members] = f"{clock(w_start)}\u2013{clock(w_end)}"
    return label


STUCK_GROUP_COLS = ("sending_qmgr", "channel", "qmgr", "channel_state", "window", "reason", "messages", "oldest",
                    "queues", "applications", "released", "release", "example_msg_id", "explain", "remedy")


def group_remedy(day: Day, g: pd.DataFrame) -> str:
    """The cause and remedy of one stuck group, from clwl.analyses.remedies' one table, with its objects named: the
    queue, the channel, the named target queue manager and what pinned a bind on open (from the group's puts
    and the sender's configuration at its first wait)."""
    first = g.iloc[0]
    sender, queue = str(first["sending_qmgr"]), str(first["queue"])
    view = view_at(day, sender, first["held_from"])
    browse = first["kind"] == "browse"
    key = stay_cause(first["why"], first["detail"], browse=browse, single_instance=single_instance(view, queue))
    if key is None:
        return ""
    puts = day.puts if day.puts is not None else pd.DataFrame(columns=["msg_id", "bind", "target_qmgr"])
    mine = puts[puts["msg_id"].isin(set(g["msg_id"]))] if not puts.empty else puts
    target = next((str(t) for t in mine.get("target_qmgr", ()) if t is not None and not pd.isna(t) and t), None)
    bind = next((str(b) for b in mine.get("bind", ()) if b is not None and not pd.isna(b)), None)
    pinned, fix = pinned_by(bind, view, queue) if key == "bind-on-open" else (None, None)
    seen = browse_seen(g).max() if browse else None
    queues = ", ".join(sorted(g["queue"].dropna().astype(str).unique()))
    text = remedy(key, qmgr=first["qmgr"], queue=queues, channel=first["channel"], sender=sender, target=target,
                  alias=alias_note(view, target, first["qmgr"]), pinned_by=pinned, fix=fix,
                  step=step_of(first["detail"]),
                  seen=f"the {clock(seen)} browse" if seen is not None and not pd.isna(seen) else None)
    return text if text.endswith(".") else text + "."

def annotate_stuck(stuck: pd.DataFrame, day: dt.date) -> pd.DataFrame:
    """The stuck rows with their outage window, reason (why: detail) and kind: waited in the replay and was
    not re-allocatable, waited as still the most favourable, or seen by a browse after the replay delivered it."""
    s = stuck.copy()
    s["held_from"] = pd.to_datetime(s["held_from"], utc=True)
    s["released_at"] = pd.to_datetime(s["released_at"], utc=True)
    s["channel_state"] = s["channel_state"].where(s["channel_state"].notna(), "")
    s["window"] = _windows(s, pd.Timestamp(day, tz="UTC") + pd.Timedelta(days=1))
    s["reason"] = s.apply(_reason, axis=1)
    # "browse": a browse saw it after the replay delivered it and nothing saw it leave (its release is unknown); a
    # browse-seen message the channel agents' trace saw leave has its release, and counts by its reason.
    s["kind"] = ["browse" if _missed(r) and pd.isna(r["released_at"]) else str(r["why"]) for _, r in s.iterrows()]
    s["seen"] = browse_seen(s) if "observed_on_xmitq" in s.columns else pd.NaT
    s["head"] = [str(d).split(";")[0].strip() if not pd.isna(d) else "" for d in s["detail"]]
    return s.sort_values(["held_from", "msg_id"], kind="stable")


def stuck_groups(stuck: pd.DataFrame, day: dt.date, explain: bool = True, *, apps: dict[str, str] | None = None,
                 remedy_of: Callable[[pd.DataFrame], str] | None = None) -> pd.DataFrame:
    """The stuck messages grouped by sending queue manager, channel, time window and reason: count, the oldest
    age (h:mm), when they were released or what would release them, and one message id to look at (the one that
    waited longest), with the `clwl explain` command that tells its story (``explain``; not in a what-if report:
    the command reads the published tables). apps: msg_id -> application (counted per group); remedy_of: the
    group's cause and remedy (:func:`group_remedy`)."""
    if stuck.empty:
        return pd.DataFrame(columns=[*STUCK_GROUP_COLS, "oldest_seconds"])
    s = annotate_stuck(stuck, day)
    out = []
    keys = ["sending_qmgr", "channel", "qmgr", "channel_state", "window", "reason"]
    for key, g in s.groupby(keys, sort=False, dropna=False):
        g = g.sort_values("held_from")
        rec = dict(zip(keys, key))
        rec.update(messages=len(g), oldest_seconds=int(g["age_seconds"].max()) if g["age_seconds"].notna().any()
                   else None, queues=", ".join(sorted(g["queue"].dropna().astype(str).unique())),
                   released=_released(g), release=_release(g), example_msg_id=g["msg_id"].iloc[0],
                   explain=f"clwl explain {g['msg_id'].iloc[0]} --date {day.isoformat()}" if explain else "",
                   first=g["held_from"].min(), applications=applications_text(g["msg_id"], apps or {}),
                   remedy=remedy_of(g) if remedy_of is not None else "")
        rec["oldest"] = hmm(rec["oldest_seconds"])
        out.append(rec)
    groups = pd.DataFrame(out)
    return groups.sort_values(["first", "sending_qmgr", "channel", "messages"],
                              ascending=[True, True, True, False]).reset_index(drop=True)


def _counted(part: pd.DataFrame) -> str:
    """"bind-on-open 11, named-qmgr 3" for a part of the annotated stuck rows."""
    return ", ".join(f"{h or 'no detail'} {n}" for h, n in part["head"].value_counts().items())


def stuck_findings(stuck: pd.DataFrame, groups: pd.DataFrame, day: dt.date,
                   apps: dict[str, str] | None = None) -> list[str]:
    """One sentence per (sending queue manager, channel, window), with the reasons counted inside it and, with
    ``apps`` (msg_id -> application), who put them."""
    if stuck.empty:
        return [f"No message was stuck on {day.isoformat()}: none waited on a transmission queue behind a channel "
                "that moved nothing."]
    s = annotate_stuck(stuck, day)
    still = int(groups.loc[groups["released"] == STILL_WAITING, "messages"].sum())
    seen = s[s["kind"] == "browse"]
    channels = s[["sending_qmgr", "channel"]].drop_duplicates()
    # A browse's sighting is no wait of the replay: when it left is unknown, so it is neither released nor "still
    # waiting"; the sentence says so rather than count it among the released.
    waited = "of those that waited in the replay, " if len(seen) else ""
    out = [f"{len(s)} messages were stuck on {day.isoformat()} behind {len(channels)} "
           f"channel{'s' if len(channels) != 1 else ''}, the longest for {hmm(s['age_seconds'].max())}; "
           + waited + (f"{still} still waiting at the end of the day" if still
                       else "none was still waiting at the end of the day")
           + ((f"; the other {len(seen)} were" if len(seen) > 1 else "; the other one was")
              + " seen on a transmission queue by a browse after the replay had delivered "
              + ("them, and when they left it is unknown." if len(seen) > 1 else "it, and when it left is unknown.")
              if len(seen) else ".")]
    for (sender, channel, window), g in s.groupby(["sending_qmgr", "channel", "window"], sort=False):
        n = len(g)
        state = next((x for x in g["channel_state"] if x), "")
        parts = []
        # A message's cause is the application's (bind on open, ...) whatever saw it wait: a browse-seen one counts
        # under its cause, and the browse is said beside it (what the captures missed).
        bound = g[g["why"] == "not-reallocatable"]
        favourite = g[(g["kind"] == "still-most-favourable")]
        seen = g[g["kind"] == "browse"]
        other_seen = seen[seen["why"] != "not-reallocatable"]
        if len(bound):
            parts.append(f"{len(bound)} not re-allocatable ({_counted(bound)})")
        if len(favourite):
            parts.append(f"{len(favourite)} with {g['qmgr'].iloc[0]} still the most favourable ({_counted(favourite)})")
        if len(seen):
            last = seen["seen"].max()
            of = "of those, " if len(other_seen) < len(seen) else ""
            parts.append(f"{of}{len(seen)} seen on the transmission queue by the {clock(last)} browse after the "
                         "replay had delivered them (the channel failed between status captures)")
        # Seen by the browse after the replay had delivered them, and seen leaving by the channel agents' trace.
        traced = g[[_missed(r) and not pd.isna(r["released_at"]) for _, r in g.iterrows()]] \
            if "observed_on_xmitq" in g.columns else g.iloc[0:0]
        if len(traced):
            parts.append(f"{len(traced)} seen on the transmission queue by the {clock(traced['seen'].max())} browse "
                         f"and traced leaving it at {clock(traced['released_at'].max())} (the channel agents' trace)")
        waited = g[g["kind"] != "browse"]
        if len(waited) and waited["released_at"].notna().all():
            how = " (the channel agents' trace)" if _traced(waited) else f" when {channel} ran again"
            release = f"released at {clock(waited['released_at'].max())}{how}"
        elif len(waited):
            release = "still waiting at the end of the day: " + _release(waited[waited["released_at"].isna()])
        else:
            release = _release(g)
        out.append(f"{sender} \u2192 {g['qmgr'].iloc[0]} over {channel}{f' ({state})' if state else ''}, "
                   f"{window}: {n} message{'s' if n != 1 else ''} stuck, the oldest for "
                   f"{hmm(g['age_seconds'].max())}: {'; '.join(parts)}. {release[0].upper()}{release[1:]}."
                   + (f" Put by {applications_text(g['msg_id'], apps)}." if apps else ""))
        if len(out) > MAX_FINDINGS:
            out.append(f"... and more: see the {len(groups)} groups below.")
            break
    return out


STUCK_COLS = ("sending_qmgr", "msg_id", "queue", "qmgr", "channel", "channel_state", "held_from", "released_at",
              "age", "why", "detail", "observed_on_xmitq")


# The groups as the HTML shows them, to fit 1400 px (clwl.report.model.estimated_width): sender, channel and
# receiving queue manager as one "route", shorter headers; long text behind disclosures, the id short with a
# copy button.
STUCK_GROUP_SHOWN = ("route", "state", "window", "reason", "messages", "oldest", "queues", "applications", "released",
                     "release", "example", "explain", "remedy")


def shown_groups(groups: pd.DataFrame) -> pd.DataFrame:
    if groups.empty:
        return groups.assign(route=[], state=[], example=[])
    return groups.assign(route=[f"{s} {c} \u2192 {q}" for s, c, q in zip(groups["sending_qmgr"], groups["channel"],
                                                                          groups["qmgr"])],
                         state=groups["channel_state"], example=groups["example_msg_id"])


def stuck_section(day: Day, rep: Report) -> None:
    """Stuck messages: grouped first, every row behind a disclosure."""
    stuck = day.stuck_rows
    groups = stuck_groups(stuck, day.run_date, explain=day.whatif is None, apps=application_by_msg(day),
                          remedy_of=lambda g: group_remedy(day, g))
    rep.stuck_total = len(stuck)
    rep.findings_stuck = stuck_findings(stuck, groups, day.run_date, application_by_msg(day))
    rep.stuck_groups = table_view("stuck-groups", shown_groups(groups), STUCK_GROUP_SHOWN, "No stuck messages.",
                                  wrap=("reason", "queues", "applications"),
                                  details=("released", "release", "explain", "remedy"), ids=("example",),
                                  keys={"oldest": "oldest_seconds"})
    ordered = stuck.sort_values(["held_from", "msg_id"]) if "held_from" in stuck.columns else stuck
    rep.stuck_rows = table_view("stuck-rows", ordered, STUCK_COLS, "No stuck messages.",
                                wrap=("why",), details=("detail",), ids=("msg_id",), keys={"age": "age_seconds"})
