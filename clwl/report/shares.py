"""Configured shares beside the replayed and the observed ones, per sending queue manager, queue and destination,
and the replay per queue.

The configured share is the engine's (clwl/engine/router.py, the algorithm of docs/algorithm.md), not a copy of some of
its steps: for each configuration snapshot of the sending queue manager, with every channel's state taken as
RUNNING (channel state is left out on purpose: the replayed share shows what outages did), a
:class:`~clwl.engine.router.Router` routes the queue's messages as an application on the sending queue manager puts them
(not fixed, not from a cluster channel), and each destination's share is the part of them it receives:

- When the steps before 12 leave several candidates and nothing stateful remains (``Router.lru_prepared``: no
  CLWLMRUC below the number of channels), step 12 chooses the least recently used: each choice adds
  1000 / CLWLWGHT to the chosen candidate's DestSeqFactor and the lowest factor goes next. After W messages,
  W the sum of the candidates' weights, every candidate has been chosen exactly its weight's number of times (one
  chosen more often would have been chosen at a factor of at least 1000 while the lowest, so every other at
  least 1000 too, which makes more than W choices). So the share of candidate i is exactly w_i / W, and
  ``clwl route --count N`` for any multiple N of W gives exactly these counts. A queue manager reached over
  two channels (two clusters) is two candidates: its share is the two weights' part.
- Otherwise (the steps before 12 decide alone, or step 11c's CLWLMRUC keeps only the most recently used
  channels) the engine routes ``ROUTED_MESSAGES`` messages and the shares are what they received.

Where this corrects the copy of the steps the report had before (it took the best-ranked channel to each queue
manager for it, and ignored clusters and CLWLMRUC): a queue manager reached over two channels gets both
channels' weights; CLWLMRUC(1) sends everything to the first destination chosen; an instance in a cluster the
sending queue manager is not in is eliminated by step 1.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd

from clwl.engine.model import DEFAULT_CLWLWGHT, ClusterView
from clwl.engine.shares import engine_shares, steady
from clwl.report.model import MAX_TABLE_ROWS, Day, Report, pct, table_view
from clwl.report.read import NONE

#: The columns of the configured shares (configured_shares).
CONFIGURED_COLS = ["sending_qmgr", "queue", "interval_start", "interval_end", "interval", "qmgr", "channel", "ch_rank",
                   "q_rank", "ch_prty", "q_prty", "weight", "suspended", "put", "configured_share"]


def configured_shares(timelines: dict[str, list[Any]], day: dt.date, profile: str = "default") -> pd.DataFrame:
    """Per sending queue manager, queue and interval of the run date in which its configuration stood, and
    destination: the configuration and the share the engine gives each destination with every channel running
    (:func:`engine_shares`). The day is split at each capture that changed the queue's configured rows (the
    configuration before the day carries into its first interval); interval_start, interval_end (UTC) and
    interval ("HH:MM–HH:MM") say when each row held."""
    day_start = pd.Timestamp(day, tz="UTC")
    day_end = day_start + pd.Timedelta(days=1)
    cache: dict[tuple[ClusterView, str], dict[str, float]] = {}  # a configuration seen again is not routed again
    rows = []
    for sender, snaps in timelines.items():
        # per queue: [(from, {qmgr: row})], consecutive equal configurations collapsed
        history: dict[str, list[tuple[pd.Timestamp, dict[str, dict]]]] = {}
        ordered = sorted(snaps, key=lambda sn: sn.time)
        before = [sn for sn in ordered if pd.Timestamp(sn.time) <= day_start]
        for snap in before[-1:] + [sn for sn in ordered if day_start < pd.Timestamp(sn.time) < day_end]:
            t = max(pd.Timestamp(snap.time), day_start)
            queues = snapshot_shares(sender, snap.view, profile, cache)
            for queue in set(queues) | set(history):
                per_qmgr = queues.get(queue, {})  # a queue gone from the view: no destination from then on
                seq = history.setdefault(queue, [])
                if not seq or seq[-1][1] != per_qmgr:
                    seq.append((t, per_qmgr))
        for seq in history.values():
            for i, (start, per_qmgr) in enumerate(seq):
                end = seq[i + 1][0] if i + 1 < len(seq) else day_end
                for _, row in sorted(per_qmgr.items()):
                    rows.append({**row, "interval_start": start, "interval_end": end,
                                 "interval": interval_text(start, end, day_start)})
    return pd.DataFrame(rows, columns=CONFIGURED_COLS) if rows else pd.DataFrame(columns=CONFIGURED_COLS)


def interval_text(start: pd.Timestamp, end: pd.Timestamp, day_start: pd.Timestamp) -> str:
    """"all day", or "HH:MM–HH:MM" (24:00 for the end of the day)."""
    day_end = day_start + pd.Timedelta(days=1)
    if start <= day_start and end >= day_end:
        return "all day"
    return f"{start:%H:%M}\u2013{'24:00' if end >= day_end else f'{end:%H:%M}'}"


def snapshot_shares(sender: str, view: ClusterView, profile: str = "default",
                    cache: dict | None = None) -> dict[str, dict[str, dict]]:
    """Per queue and destination queue manager: the configured attributes and the engine's share in one
    snapshot's view. Of the channels to a queue manager, the best-ranked one's rank, priority and suspension are
    shown, the channels' CLWLWGHT added up (the engine chooses each channel by its own weight)."""
    running = steady(view)
    by_qmgr: dict[str, list[Any]] = {}
    for c in view.channels:
        by_qmgr.setdefault(c.qmgr, []).append(c)
    best = {q: max(cs, key=lambda c: (c.clwlrank, c.clwlprty, c.clwlwght, c.name)) for q, cs in by_qmgr.items()}
    out: dict[str, dict[str, dict]] = {}
    for queue in sorted({i.queue for i in view.instances}):
        key = (running, queue)
        if cache is None or key not in cache:
            shares = engine_shares(running, queue, profile)
            if cache is not None:
                cache[key] = shares
        else:
            shares = cache[key]
        out[queue] = {}
        for inst in view.instances_of(queue):
            local = inst.local or inst.qmgr == view.local_name
            ch = None if local else best.get(inst.qmgr)
            chans = sorted(by_qmgr.get(inst.qmgr, ()), key=lambda c: c.name) if not local else []
            out[queue][inst.qmgr] = dict(
                sending_qmgr=sender, queue=queue, qmgr=inst.qmgr,
                channel="(local)" if local else ", ".join(c.name for c in chans),
                ch_rank=0 if ch is None else ch.clwlrank, q_rank=inst.clwlrank,
                ch_prty=0 if ch is None else ch.clwlprty, q_prty=inst.clwlprty,
                weight=view.local_weight(inst) if local else (sum(c.clwlwght for c in chans) if chans else DEFAULT_CLWLWGHT),
                suspended=bool(ch.suspended) if ch is not None else False,
                put="ENABLED" if inst.put_enabled else "DISABLED",
                configured_share=shares.get(inst.qmgr, 0.0))
    return out


SHARE_COLS = ("sending_qmgr", "queue", "interval", "qmgr", "channel", "put", "rank", "prty", "weight", "configured",
              "replayed", "replayed_share", "observed", "observed_share")


def interval_of(cube: pd.DataFrame, configured: pd.DataFrame, day: dt.date) -> pd.Series:
    """Per cube row, the start of the configured interval its messages were routed in: the last interval of its
    (sender, queue) starting at or before its config_time (a configuration of an earlier day: the first);
    without config_time the one interval of a day whose configuration did not change, else NaT."""
    day_start = pd.Timestamp(day, tz="UTC")
    starts = ({k: sorted(set(g["interval_start"])) for k, g in configured.groupby(["sending_qmgr", "queue"])}
              if not configured.empty else {})
    out = []
    for s, q, ct in zip(cube["sending_qmgr"], cube["queue"], cube.get("config_time", pd.Series(NONE, index=cube.index))):
        mine = starts.get((s, q))
        if not mine or not ct:  # no configuration, or a lake without config_time: only a day of one configuration
            out.append(mine[0] if mine and len(mine) == 1 else pd.NaT)
            continue
        t = max(pd.Timestamp(ct).tz_convert("UTC") if pd.Timestamp(ct).tzinfo else pd.Timestamp(ct, tz="UTC"),
                day_start)
        out.append(max((x for x in mine if x <= t), default=mine[0]))
    return pd.to_datetime(pd.Series(out, index=cube.index, dtype=object), utc=True)


def share_table(configured: pd.DataFrame, cube: pd.DataFrame, day: dt.date | None = None) -> pd.DataFrame:
    """Configured share beside the replayed and the observed share, per sending queue manager, queue, interval
    of its configuration (:func:`configured_shares`) and destination, for the (sender, queue) pairs that had
    messages: the replayed and observed counts of an interval are its messages routed with that configuration
    (routing_replay's config_time), so each share is compared with the configuration it was routed under."""
    if cube.empty:
        return pd.DataFrame(columns=SHARE_COLS)
    ok = cube[cube["final_qmgr"] != "(error)"].copy()
    keys = ["sending_qmgr", "queue", "interval_start"]
    if day is not None and not configured.empty:
        ok["interval_start"] = interval_of(ok, configured, day)
    else:
        ok["interval_start"] = pd.NaT
    ok["interval_start"] = pd.to_datetime(ok["interval_start"], utc=True)
    rep = ok.groupby([*keys, "final_qmgr"], dropna=False)["messages"].sum().rename("replayed").reset_index() \
        .rename(columns={"final_qmgr": "qmgr"})
    seen = ok[ok["observed_qmgr"] != NONE]
    obs = seen.groupby([*keys, "observed_qmgr"], dropna=False)["messages"].sum().rename("observed") \
        .reset_index().rename(columns={"observed_qmgr": "qmgr"})
    both = rep.merge(obs, on=[*keys, "qmgr"], how="outer")
    conf = configured
    if not conf.empty:
        conf = conf.assign(interval_start=pd.to_datetime(conf["interval_start"], utc=True))
        conf = conf.merge(both[["sending_qmgr", "queue"]].drop_duplicates(), on=["sending_qmgr", "queue"])
    out = both.merge(conf, on=[*keys, "qmgr"], how="outer") if not conf.empty else both
    out[["replayed", "observed"]] = out[["replayed", "observed"]].fillna(0).astype("int64")
    # an interval of the configuration in which the sender put none of the queue's messages: nothing to compare
    had = out.groupby(keys, dropna=False)["replayed"].transform("sum") + out.groupby(keys, dropna=False)[
        "observed"].transform("sum")
    out = out[had > 0].copy()
    for side in ("replayed", "observed"):
        totals = out.groupby(keys, dropna=False)[side].transform("sum")
        out[f"{side}_share"] = [pct(n, t) if t else "" for n, t in zip(out[side], totals)]
    if "configured_share" in out.columns:
        out["configured"] = [("" if pd.isna(v) else f"{v:.1f} %") for v in out["configured_share"]]
        filled = out.groupby(keys, dropna=False)["interval"].transform("first") if "interval" in out.columns else None
        out["interval"] = out["interval"].fillna(filled) if filled is not None else ""
        out["rank"] = [_pair(a, b) for a, b in zip(out["ch_rank"], out["q_rank"])]
        out["prty"] = [_pair(a, b) for a, b in zip(out["ch_prty"], out["q_prty"])]
        out["put"] = [("" if pd.isna(p) else str(p)) + (" (suspended)" if s is True else "")
                      for p, s in zip(out["put"], out["suspended"])]
        out["weight"] = out["weight"].astype("Int64")
    else:
        out["interval"] = "all day"
    return out.sort_values(["queue", "sending_qmgr", "interval_start", "qmgr"], na_position="first") \
        .reset_index(drop=True)


def _pair(channel: Any, queue: Any) -> str:
    """"channel/queue" (CLWLRANK or CLWLPRTY of the channel and of the queue instance)."""
    if pd.isna(channel) and pd.isna(queue):
        return ""
    return f"{'' if pd.isna(channel) else int(channel)}/{'' if pd.isna(queue) else int(queue)}"


REPLAY_OVERVIEW = ("queue", "messages", "local", "cluster", "igq", "unroutable", "not_reallocatable", "reallocated",
                   "stuck", "still_waiting_at_day_end", "observed", "agree")

def replay_overview(cube: pd.DataFrame, stuck: pd.DataFrame) -> pd.DataFrame:
    """Per queue: messages, by path, unroutable, not re-allocatable, re-allocated, stuck (the rows of the stuck
    messages table: the same count as its section), of those still waiting at the end of the day, and how many
    observed destinations agree with the replay."""
    if cube.empty:
        return pd.DataFrame(columns=REPLAY_OVERVIEW)
    c = cube.assign(
        local=(cube["path"] == "local") * cube["messages"], cluster=(cube["path"] == "cluster") * cube["messages"],
        igq=(cube["path"] == "igq") * cube["messages"],
        unroutable=cube["unroutable"].astype(bool) * cube["messages"],
        not_reallocatable=cube["not_reallocatable"].astype(bool) * cube["messages"],
        reallocated=cube["reallocated"].astype(bool) * cube["messages"],
        still_waiting_at_day_end=cube["still_waiting"].astype(bool) * cube["messages"],
        observed=(cube["agrees"] != NONE) * cube["messages"], agree=(cube["agrees"] == "yes") * cube["messages"])
    cols = ["messages", "local", "cluster", "igq", "unroutable", "not_reallocatable", "reallocated",
            "still_waiting_at_day_end", "observed", "agree"]
    g = c.groupby("queue")[cols].sum().astype(int)
    per_queue = stuck.groupby("queue").size() if not stuck.empty else pd.Series(dtype=int)
    g["stuck"] = per_queue.reindex(g.index).fillna(0).astype(int)
    return g.reset_index().sort_values(["messages", "queue"], ascending=[False, True])[list(REPLAY_OVERVIEW)]


def shares_section(day: Day, rep: Report) -> None:
    """Configured (the engine's, from the day's configuration) beside replayed beside observed."""
    configured = (configured_shares(day.timelines, day.run_date, day.profile) if day.timelines is not None
                  else pd.DataFrame())
    shares = share_table(configured, day.routing_cube, day.run_date)
    rep.shares = table_view("shares", shares, SHARE_COLS, "No messages replayed for this run date.",
                            limit=MAX_TABLE_ROWS * 2, wrap=("channel",))
    rep.shares_note = day.configured_note


def replay_section(day: Day, rep: Report) -> None:
    """The replay per queue (its stuck count: the rows of the stuck section)."""
    rep.replay_overview = table_view("replay", replay_overview(day.routing_cube, day.stuck_rows), REPLAY_OVERVIEW,
                                     "No messages replayed for this run date.")
