"""Configured shares beside the replayed and the observed ones, per sending queue manager, queue and destination,
and the replay per queue.

The configured share is the engine's (clwl/router.py, the algorithm of docs/algorithm.md), not a copy of some of
its steps: for each configuration snapshot of the sending queue manager, with every channel's state taken as
RUNNING (channel state is left out on purpose: the replayed share shows what outages did), a
:class:`~clwl.router.Router` routes the queue's messages as an application on the sending queue manager puts them
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

from clwl.model import ClusterView
from clwl.report.model import MAX_TABLE_ROWS, Day, Report, pct, table_view
from clwl.report.read import NONE
from clwl.shares import engine_shares, steady

#: The columns of the configured shares (configured_shares).
CONFIGURED_COLS = ["sending_qmgr", "queue", "qmgr", "channel", "ch_rank", "q_rank", "ch_prty", "q_prty", "weight",
                   "suspended", "put", "configured_share", "config_since", "earlier"]


def configured_shares(timelines: dict[str, list[Any]], day: dt.date, profile: str = "default") -> pd.DataFrame:
    """Per sending queue manager, queue and destination, the configuration in force at the end of the run date
    and the share the engine gives each destination with every channel running (:func:`engine_shares`).
    config_since: from when the queue's configuration stood as shown ("all day" when it did not change on the
    run date); earlier: the configured shares it replaced, with their start."""
    day_start = pd.Timestamp(day, tz="UTC")
    day_end = day_start + pd.Timedelta(days=1)
    cache: dict[tuple[ClusterView, str], dict[str, float]] = {}  # a configuration seen again is not routed again
    rows = []
    for sender, snaps in timelines.items():
        # per queue: [(snapshot time, {qmgr: row})], consecutive equal configurations collapsed
        history: dict[str, list[tuple[pd.Timestamp, dict[str, dict]]]] = {}
        for snap in sorted(snaps, key=lambda sn: sn.time):
            t = pd.Timestamp(snap.time)
            if t >= day_end:
                continue
            for queue, per_qmgr in snapshot_shares(sender, snap.view, profile, cache).items():
                seq = history.setdefault(queue, [])
                if not seq or seq[-1][1] != per_qmgr:
                    seq.append((t, per_qmgr))
        for seq in history.values():
            since, last = seq[-1]
            for qmgr, row in sorted(last.items()):
                shown: list[str] = []
                last_share = None
                for t, prev in seq[:-1]:
                    share = prev.get(qmgr, {}).get("configured_share")
                    if share is not None and share != last_share:
                        shown.append(f"{share:.1f} % from {max(t, day_start):%H:%M}")
                    last_share = share
                # the same share as now all along: a change elsewhere in the queue's configuration, not worth a note
                same = all(e.startswith(f"{row['configured_share']:.1f} %") for e in shown)
                earlier = "" if same else "; ".join(shown)
                rows.append({**row, "config_since": _since(since, day_start), "earlier": earlier})
    return pd.DataFrame(rows, columns=CONFIGURED_COLS) if rows else pd.DataFrame(columns=CONFIGURED_COLS)


def _since(t: pd.Timestamp, day_start: pd.Timestamp) -> str:
    return "all day" if t <= day_start else t.strftime("%H:%M")


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
    local_weight = max((r.clwlwght for r in view.local_receivers), default=50)
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
                weight=local_weight if local else (sum(c.clwlwght for c in chans) if chans else 50),
                suspended=bool(ch.suspended) if ch is not None else False,
                put="ENABLED" if inst.put_enabled else "DISABLED",
                configured_share=shares.get(inst.qmgr, 0.0))
    return out


SHARE_COLS = ("sending_qmgr", "queue", "qmgr", "channel", "put", "suspended", "ch_rank", "q_rank", "ch_prty",
              "q_prty", "weight", "configured", "replayed", "replayed_share", "observed", "observed_share",
              "config_since", "earlier")

def share_table(configured: pd.DataFrame, cube: pd.DataFrame) -> pd.DataFrame:
    """Configured share beside the replayed and the observed share, per sending queue manager, queue and
    destination, for the (sender, queue) pairs that had messages."""
    if cube.empty:
        return pd.DataFrame(columns=SHARE_COLS)
    ok = cube[cube["final_qmgr"] != "(error)"]
    rep = ok.groupby(["sending_qmgr", "queue", "final_qmgr"])["messages"].sum().rename("replayed").reset_index() \
        .rename(columns={"final_qmgr": "qmgr"})
    seen = ok[ok["observed_qmgr"] != NONE]
    obs = seen.groupby(["sending_qmgr", "queue", "observed_qmgr"])["messages"].sum().rename("observed") \
        .reset_index().rename(columns={"observed_qmgr": "qmgr"})
    both = rep.merge(obs, on=["sending_qmgr", "queue", "qmgr"], how="outer")
    pairs = both[["sending_qmgr", "queue"]].drop_duplicates()
    conf = configured.merge(pairs, on=["sending_qmgr", "queue"]) if not configured.empty else configured
    out = both.merge(conf, on=["sending_qmgr", "queue", "qmgr"], how="outer") if not conf.empty else both
    out[["replayed", "observed"]] = out[["replayed", "observed"]].fillna(0).astype("int64")
    for side in ("replayed", "observed"):
        totals = out.groupby(["sending_qmgr", "queue"])[side].transform("sum")
        out[f"{side}_share"] = [pct(n, t) if t else "" for n, t in zip(out[side], totals)]
    if "configured_share" in out.columns:
        out["configured"] = [("" if pd.isna(v) else f"{v:.1f} %") for v in out["configured_share"]]
    for c in ("ch_rank", "q_rank", "ch_prty", "q_prty", "weight"):
        if c in out.columns:
            out[c] = out[c].astype("Int64")
    return out.sort_values(["queue", "sending_qmgr", "qmgr"]).reset_index(drop=True)


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
    shares = share_table(configured, day.routing_cube)
    rep.shares = table_view("shares", shares, SHARE_COLS, "No messages replayed for this run date.",
                            limit=MAX_TABLE_ROWS * 2)
    rep.shares_note = day.configured_note


def replay_section(day: Day, rep: Report) -> None:
    """The replay per queue (its stuck count: the rows of the stuck section)."""
    rep.replay_overview = table_view("replay", replay_overview(day.routing_cube, day.stuck_rows), REPLAY_OVERVIEW,
                                     "No messages replayed for this run date.")
