"""Messages held on a transmission queue behind a RETRYING channel (an outage): exact counters and the first
messages in full, which the browses print, and what the ground truth says about them."""

from __future__ import annotations

from dataclasses import dataclass

# --------------------------------------------------------------------------------------------------
# What the simulation hands over: held messages, accounting counters


@dataclass
class HeldMessage:
    """A message kept on a transmission queue behind a RETRYING channel (for the browses)."""

    t_ms: int
    queue: str
    target: str
    dest: str
    channel: str
    xmitq: str
    bind: str
    handle: str
    group_id: bytes
    group_seq: int
    group_last: bool
    logical: bool
    length: int
    persistent: bool
    msg_id: bytes
    app_role: str
    zero: bool
    reason: str


class HeldStore:
    """Messages held behind one outage, for one sending queue manager: exact counters, and the first
    ``cap`` messages in full (for the browse)."""

    def __init__(self, sender: str, outage: int, browse_ms: int, cap: int):
        self.sender, self.outage, self.browse_ms, self.cap = sender, outage, browse_ms, cap
        self.counts: dict[tuple[int, int, int], list[int]] = {}  # (key, queue index, persistent) -> n, bytes, min, max
        self.reasons: dict[str, int] = {}
        self.kept: list[HeldMessage] = []
        self.at_browse = 0  # held messages put before the browse
        self.total = 0

    def add(self, key: int, qi: int, pers: int, length: int, reason: str, t_ms: int, detail) -> None:
        c = self.counts.get((key, qi, pers))
        if c is None:
            self.counts[(key, qi, pers)] = [1, length, length, length]
        else:
            c[0] += 1
            c[1] += length
            c[2] = min(c[2], length)
            c[3] = max(c[3], length)
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        self.total += 1
        if t_ms < self.browse_ms:
            self.at_browse += 1
            if len(self.kept) < self.cap:
                self.kept.append(detail())
