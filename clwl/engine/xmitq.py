"""Which transmission queue a cluster-sender channel uses (docs/algorithm.md, transmission queue), and the delivery path
(local, cluster, or intra-group queuing per docs/algorithm.md (intra-group queuing)).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from clwl.engine.model import (
    CF_OFFLOAD_MESSAGE_LIMIT,
    CF_SMALL_MESSAGE_LIMIT,
    IGQ_DEFAULT_MAX_MESSAGE,
    IGQ_DEFAULT_WHY,
    MQXQH_LENGTH,
    QSG_XMITQ,
    SCTQ,
    ClusterChannel,
    ClusterView,
    LocalQueue,
)
from clwl.landing.evidence import igq_gap_text


@lru_cache(maxsize=4096)
def _pattern(clchname: str) -> re.Pattern[str]:
    # CLCHNAME allows '*' in any position (start, end or middle); every other character is literal.
    return re.compile("".join(".*" if ch == "*" else re.escape(ch) for ch in clchname) + r"\Z")


def clchname_matches(clchname: str, channel: str) -> bool:
    return bool(clchname) and _pattern(clchname).match(channel) is not None


def specificity(clchname: str) -> tuple[int, int]:
    """Higher is more specific: an exact name beats any generic one; among generic ones, the one with more
    characters other than '*' wins (docs/algorithm.md reading 7)."""
    return (1 if "*" not in clchname else 0, sum(ch != "*" for ch in clchname))


def configured_xmitq(channel: str, view: ClusterView) -> tuple[str, str]:
    """(transmission queue, why) the configuration names for ``channel``.

    A manually defined transmission queue (USAGE(XMITQ)) whose CLCHNAME matches wins; of several, the
    most specific, then the transmission queue name ascending. Else DEFCLXQ decides.
    """
    matches: list[LocalQueue] = [
        q for q in view.local_queues if q.usage == "XMITQ" and clchname_matches(q.clchname, channel)
    ]
    if matches:
        best = min(matches, key=lambda q: (tuple(-x for x in specificity(q.clchname)), q.name))
        kind = "exact" if "*" not in best.clchname else "generic"
        return best.name, f"CLCHNAME({best.clchname}) of {best.name} is the most specific ({kind}) match"
    if view.qmgr.defclxq == "CHANNEL":
        return f"SYSTEM.CLUSTER.TRANSMIT.{channel}", "DEFCLXQ(CHANNEL): a transmission queue per channel"
    return SCTQ, "no CLCHNAME matches; DEFCLXQ(SCTQ)"


def channel_xmitq(channel: ClusterChannel, view: ClusterView) -> tuple[str, str]:
    """The transmission queue messages for ``channel`` are put to now.

    A channel only switches to a newly configured transmission queue when it starts, and until the
    switch completes new messages still go to the old queue; so when the channel reports the queue it is
    using (CHSTATUS or CLUSQMGR XMITQ) and that differs from the configuration, the current one is used.
    """
    want, why = configured_xmitq(channel.name, view)
    if channel.current_xmitq and channel.current_xmitq != want:
        return channel.current_xmitq, (
            f"channel still uses {channel.current_xmitq}; the configured {want} ({why}) takes effect when "
            f"the channel next starts")
    return want, why


@dataclass(frozen=True)
class IgqLimit:
    """The largest message intra-group queuing carries, and which limit decided it (docs/algorithm.md)."""

    max_message: int = IGQ_DEFAULT_MAX_MESSAGE
    why: str = IGQ_DEFAULT_WHY


def _whole(value: str | None) -> int | None:
    try:
        return int(str(value).strip()) if value is not None and str(value).strip() else None
    except ValueError:
        return None


def igq_limit(queue_maxmsgl: str | None, queue_cfstruct: str | None, structure: dict | None) -> IgqLimit:
    """The IGQ limit from the shared transmission queue (``MAXMSGL``, ``CFSTRUCT`` of its DISPLAY QLOCAL, None
    when not captured) and its structure's DISPLAY CFSTRUCT attributes (None when not captured).

    The shared queue takes messages up to the smaller of its MAXMSGL and its structure's limit (63 KB below
    CFLEVEL(4); 100 MB from CFLEVEL(4), the larger ones offloaded to Db2 or SMDS); IGQ carries the message with
    its MQXQH, so 428 bytes less. A structure not captured is taken as CFLEVEL(3), as in IBM's example, and the
    reason says it was assumed."""
    name = (queue_cfstruct or "").strip()
    level = _whole((structure or {}).get("CFLEVEL"))
    if structure is not None and level is not None:
        offload = ((structure or {}).get("OFFLOAD") or "").strip()
        if level >= 4:
            s_limit = CF_OFFLOAD_MESSAGE_LIMIT
            s_text = (f"100 MB: structure {name} at CFLEVEL({level})"
                      + (f" with OFFLOAD({offload})" if offload else ", larger messages offloaded to Db2"))
        else:
            s_limit, s_text = CF_SMALL_MESSAGE_LIMIT, f"63 KB: structure {name} at CFLEVEL({level})"
    else:
        s_limit = CF_SMALL_MESSAGE_LIMIT
        s_text = ("63 KB, assumed: " + (f"structure {name} not captured (DISPLAY CFSTRUCT)" if name else
                                        f"the structure of {QSG_XMITQ} was not captured")
                  + ", taken as CFLEVEL(3) as in IBM's example")
    maxmsgl = _whole(queue_maxmsgl)
    assumed = structure is None or level is None
    # 63 KB is the smallest limit of any structure: a MAXMSGL at or below it decides whatever the structure is.
    if maxmsgl is not None and (maxmsgl < s_limit or (assumed and maxmsgl <= s_limit)):
        limit, text = maxmsgl, f"MAXMSGL of {QSG_XMITQ}"
    elif maxmsgl == s_limit:  # both decide: both are named
        limit, text = maxmsgl, f"MAXMSGL of {QSG_XMITQ}, and {s_text}"
    else:
        limit, text = s_limit, s_text
    return IgqLimit(max(limit - MQXQH_LENGTH, 0),
                    f"{max(limit - MQXQH_LENGTH, 0):,} = {limit:,} ({text}) less the {MQXQH_LENGTH}-byte MQXQH")


@dataclass(frozen=True)
class Delivery:
    path: str  # local | cluster | igq
    xmitq: str | None
    why: str


def igq_applies(view: ClusterView, qmgr: str) -> bool:
    """Intra-group queuing is open from the sending queue manager to ``qmgr``: the sender has IGQ(ENABLED) (the
    receiving member's own IGQ does not matter) and ``qmgr`` is another member of its queue-sharing group."""
    q = view.qmgr
    return q.igq and bool(q.qsgname) and qmgr != q.name and qmgr in view.qsg_members


def igq_evidence_gap(view: ClusterView) -> str:
    """What the evidence lacks for intra-group queuing: the sender has IGQ(ENABLED) in a queue-sharing group, but
    no other member of the group is known (no other queue manager's capture shows the QSGNAME, no DISPLAY GROUP),
    so every message takes the cluster path for want of evidence, not because MQ would send it that way."""
    q = view.qmgr
    if not (q.igq and q.qsgname) or view.qsg_members:
        return ""
    return igq_gap_text(q.name, q.qsgname)


def delivery(view: ClusterView, qmgr: str, channel: ClusterChannel | None, size: int) -> Delivery:
    """The path of a message to ``qmgr`` over ``channel`` (None: the local instance): intra-group queuing for
    a message that fits the shared transmission queue, to another member of the sender's group, when the sender
    has IGQ(ENABLED); else the cluster channel's transmission queue. The destination is chosen before, as for
    clustering (IBM: "Clustering with intra-group queuing")."""
    if channel is None:
        return Delivery("local", None, "the local instance: no transmission queue")
    if igq_applies(view, qmgr):
        q = view.qmgr
        if size <= view.igq_max_message:
            return Delivery("igq", QSG_XMITQ, f"{qmgr} is in queue-sharing group {q.qsgname} and {q.name} has "
                            f"IGQ(ENABLED): {size:,} bytes <= {view.igq_limit_why}")
        xq, why = channel_xmitq(channel, view)
        return Delivery("cluster", xq, f"too large for intra-group queuing: {size:,} bytes > "
                        f"{view.igq_limit_why}; cluster path: {why}")
    xq, why = channel_xmitq(channel, view)
    return Delivery("cluster", xq, why)
