"""The delivery paths of senders in a queue-sharing group with IGQ(ENABLED) (issue 38): per sender, how many of its
messages to other members of its group went by intra-group queuing, how many were too large for the shared
transmission queue (and which limit decided), and how many went to queue managers outside the group. Built from
the rows of those senders alone (:func:`clwl.report.read.read_igq_rows`) and their configuration timelines; a day
without such a sender has no section."""

from __future__ import annotations

from typing import Any

import pandas as pd

from clwl.engine.xmitq import igq_applies
from clwl.report.model import Day, Report, table_view

PATH_COLS = ("sender", "group", "messages", "to_members", "igq", "too_large", "outside_group", "limit")


def igq_senders(timelines: dict[str, list[Any]] | None) -> list[str]:
    """Senders with IGQ(ENABLED) in a queue-sharing group in some configuration of the day."""
    return sorted(qm for qm, tl in (timelines or {}).items()
                  if any(s.view.qmgr.igq and s.view.qmgr.qsgname for s in tl))


def _view_at(timeline: list[Any], t: Any) -> Any:
    t = pd.Timestamp(t) if t is not None and not pd.isna(t) else None
    current = timeline[0].view
    for snap in timeline:
        if t is not None and pd.Timestamp(snap.time) <= t:
            current = snap.view
    return current


def delivery_paths(day: Day) -> pd.DataFrame:
    rows = day.igq_rows
    if rows is None or rows.empty or not day.timelines:
        return pd.DataFrame(columns=PATH_COLS)
    out = []
    for sender, mine in rows.groupby("sending_qmgr"):
        tl = day.timelines.get(sender)
        if not tl:
            continue
        to_members = igq = too_large = outside = 0
        limits: list[str] = []
        for r in mine.itertuples(index=False):
            if r.path not in ("igq", "cluster") or not r.qmgr:
                continue
            view = _view_at(tl, r.config_time)
            if not igq_applies(view, r.qmgr):
                outside += view.qmgr.igq  # a message IGQ was open for, to a queue manager outside the group
                continue
            to_members += 1
            if r.path == "igq":
                igq += 1
            elif int(r.length) > view.igq_max_message:
                too_large += 1
                if view.igq_limit_why not in limits:
                    limits.append(view.igq_limit_why)
        group = next((s.view.qmgr.qsgname for s in tl if s.view.qmgr.qsgname), "")
        out.append({"sender": sender, "group": group, "messages": len(mine), "to_members": to_members, "igq": igq,
                    "too_large": too_large, "outside_group": outside,
                    "limit": "; ".join(limits) or tl[-1].view.igq_limit_why})
    return pd.DataFrame(out, columns=PATH_COLS)


def paths_section(day: Day, rep: Report) -> None:
    frame = delivery_paths(day)
    rep.delivery_paths = (table_view("paths", frame, PATH_COLS, "", wrap=("limit",)) if not frame.empty else None)
