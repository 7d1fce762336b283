"""Queue-sharing group membership over a day, from what the landing holds (docs/algorithm.md, intra-group queuing).

Intra-group queuing carries a message to another member of the sending queue manager's queue-sharing group. Who
is a member is not in the sender's own DISPLAY QMGR (it names only its own group, ``QSGNAME``); it is in:

- every other queue manager's own DISPLAY QMGR: the same ``QSGNAME`` makes it a member, as of that capture (a
  queue manager can join or leave a group: each capture says where it stands from then on);
- DISPLAY GROUP output where the capture kit collects it (CSQ5102I member lines; records of kind ``QSGMEMBER``),
  which lists members whose own captures may be missing.

:class:`GroupMembership` holds these as spans (queue manager, group, from, to) and answers "who is in group G at
time t", and at which times the answer changes, so each sender's configuration timeline gets a snapshot where its
group changes. Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Mapping, Optional

#: (queue manager, queue-sharing group, valid from, valid to or None)
Span = tuple[str, str, datetime, Optional[datetime]]


@dataclass(frozen=True)
class GroupMembership:
    spans: tuple[Span, ...] = ()

    def members_at(self, group: str, t: datetime) -> frozenset[str]:
        """The queue managers in ``group`` at ``t`` (empty for no group)."""
        if not group:
            return frozenset()
        return frozenset(qm for qm, g, vf, vt in self.spans if g == group and vf <= t and (vt is None or t < vt))

    def change_points(self, group: str, start: datetime, end: datetime) -> list[datetime]:
        """The times in (start, end) at which ``group``'s members change."""
        points = sorted({p for qm, g, vf, vt in self.spans if g == group for p in (vf, vt)
                         if p is not None and start < p < end})
        out, before = [], self.members_at(group, start)
        for p in points:
            now = self.members_at(group, p)
            if now != before:
                out.append(p)
                before = now
        return out


def membership_from_history(rows: Iterable[tuple[str, str, Mapping, datetime, Optional[datetime]]]
                            ) -> GroupMembership:
    """Spans from history rows (observing queue manager, kind, attrs, valid_from, valid_to): each QMGR record with a
    QSGNAME makes its own queue manager a member for as long as it holds; each QSGMEMBER record (DISPLAY GROUP)
    the member it lists."""
    spans: list[Span] = []
    for observer, kind, attrs, vf, vt in rows:
        if kind == "QMGR":
            group = (attrs.get("QSGNAME") or "").strip()
            if group:
                spans.append(((attrs.get("QMNAME") or "").strip() or observer, group, vf, vt))
        elif kind == "QSGMEMBER":
            group, member = (attrs.get("QSGNAME") or "").strip(), (attrs.get("QSGMEMBER") or "").strip()
            if group and member:
                spans.append((member, group, vf, vt))
    return GroupMembership(tuple(sorted(spans, key=lambda s: (s[1], s[0], s[2]))))
