"""Which transmission queue a cluster-sender channel uses (docs/algorithm.md, transmission queue), and the delivery path
(local, cluster, or intra-group queuing per docs/algorithm.md (intra-group queuing)).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from clwl.model import QSG_XMITQ, SCTQ, ClusterChannel, ClusterView, LocalQueue


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
class Delivery:
    path: str  # local | cluster | igq
    xmitq: str | None
    why: str


def delivery(view: ClusterView, qmgr: str, channel: ClusterChannel | None, size: int) -> Delivery:
    if channel is None:
        return Delivery("local", None, "the local instance: no transmission queue")
    q = view.qmgr
    if q.igq and q.qsgname and qmgr in view.qsg_members and qmgr != q.name and size <= view.igq_max_message:
        return Delivery("igq", QSG_XMITQ, f"{qmgr} is in queue-sharing group {q.qsgname} with IGQ(ENABLED) "
                        f"and {size} bytes fit the shared queue (<= {view.igq_max_message})")
    xq, why = channel_xmitq(channel, view)
    return Delivery("cluster", xq, why)
