"""Channel trouble grouped into incidents, with the side to look at (docs/diagnosis.md, "Incidents"); and the
application behind a put (:func:`application_of`). Pure Python: the report (clwl/report/incidents.py) hands in
plain records.

The input is every **trouble window** of the day: a sending queue manager's cluster-sender channel to a receiving
queue manager in a state messages wait behind (not RUNNING or INACTIVE: channel status), or a span in which a
message waited behind it (the replay's hold, a browse's sighting). The rules, in order:

1. **Channel windows.** The windows of one (sender, channel) are merged: two windows overlap when their half-open
   spans ``[start, end)`` intersect (``a.start < b.end and b.start < a.end``); overlap is chained transitively
   (A overlaps B, B overlaps C: one window A..C). A window is ``[min start, max end)`` of its members.
2. **Sender side.** For one sender, its channel windows are chained the same way across its channels. A chain
   that covers *every* workload channel of the sender (its cluster-sender channels to queue managers that host a
   cluster queue it can put to, in its configuration that day), and at least two of them, is a sender-side
   incident: "QM5 lost all 3 cluster channels at 10:00: look at QM5's side".
3. **Receiver side.** For one receiving queue manager, the channel windows of the channels that lead to it
   (not already taken by rule 2's incidents) are chained across senders; a chain with channels of at least two
   senders is a receiver-side incident: "QM3 unreachable from QM1 and QM5, 13:52-17:00: look at QM3".
4. **Channel.** Every channel window left is an incident of its own.

When rules 2 and 3 both apply (a sender lost all its channels, and some of their receivers were unreachable
from other senders too), the sender side wins unless *every* channel of the sender's chain also belongs to a
receiver-side chain: then each receiver explains its channel and no sender incident is made. A sender that lost
all its channels while their receivers were fine elsewhere is a sender-side incident.

Each :class:`Incident` carries its window, channels, queues, applications with counts, the messages stuck,
re-allocated and delayed (waited at all), the longest wait, and one sentence ending with where to look.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable, Mapping, Optional, Sequence

RECEIVER, SENDER, CHANNEL = "receiver", "sender", "channel"

#: Where to look, per side: the end of each incident's sentence.
LOOK_AT = {
    RECEIVER: "look at {subject}: its listener, host, or the network to it",
    SENDER: "look at {subject}'s side: its network, its channel initiator, {xmitqs}",
    CHANNEL: "look at that channel: DISPLAY CHSTATUS({channel}) on {sender} and its receiver on {subject}",
}


# -- who --------------------------------------------------------------------------------------------------------
# An activity trace's open handle is "<Correl_id hex>:<Hobj>:<SeqNumber>.<n>" (docs/activity-trace.md): its first
# part is a connection, not an application.
_CONNECTION_ID = re.compile(r"^[0-9A-Fa-f]{32,}$")


def application_of(open_handle: Optional[str], traced_appl_name: Optional[str] = None,
                   column: Optional[str] = None) -> Optional[str]:
    """The application that put a message: the put file's ``application`` column when present, else the activity
    trace's ApplName (``traced_appl_name``, trailing blanks dropped), else the first field of an open handle of the
    form ``application:pid:handle`` (as the samples and ``clwl generate`` write it: ``orders-api:2831:1``).
    None when none of them names one (an activity trace's handle begins with its connection id, not a name)."""
    for given in (column, traced_appl_name):
        if given is not None and str(given).strip():
            return str(given).strip()
    if not open_handle or ":" not in str(open_handle):
        return None
    name = str(open_handle).split(":", 1)[0].strip()
    return name if name and not _CONNECTION_ID.match(name) else None


def counted(names: Iterable[Optional[str]]) -> tuple[tuple[str, int], ...]:
    """Names with their counts, most first (then by name); an unknown name counts as "unknown application"."""
    c = Counter(n or "unknown application" for n in names)
    return tuple(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def counts_text(counts: Sequence[tuple[str, int]]) -> str:
    """"orders-api 16, billing-svc 14"."""
    return ", ".join(f"{name} {n}" for name, n in counts)


# -- inputs -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Trouble:
    """A span in which ``sender``'s channel ``channel`` to ``receiver`` moved nothing (a channel state, or a
    message waiting behind it)."""

    sender: str
    channel: str
    receiver: str
    start: datetime
    end: datetime


@dataclass(frozen=True)
class Delay:
    """A message that waited on a transmission queue behind ``channel`` from ``held_from`` for ``wait_seconds``:
    ``stuck`` (stayed there), ``reallocated`` (moved away), and its application (None: not known)."""

    sender: str
    channel: str
    msg_id: str
    queue: str
    held_from: datetime
    wait_seconds: Optional[float]
    stuck: bool = False
    reallocated: bool = False
    application: Optional[str] = None


@dataclass(frozen=True)
class Window:
    """One channel's merged trouble window (rule 1)."""

    sender: str
    channel: str
    receiver: str
    start: datetime
    end: datetime


@dataclass
class Incident:
    side: str  # receiver | sender | channel
    subject: str  # the queue manager to look at (the receiver, or the sender); a channel incident: its receiver
    start: datetime
    end: datetime
    windows: list[Window]
    delays: list[Delay] = field(default_factory=list)
    # (sender, channel) -> the transmission queue the channel took its messages from in the window, as the engine
    # resolves it (CLCHNAME, DEFCLXQ, the queue a running channel still uses: clwl.engine.xmitq); missing: not known.
    xmitqs: dict[tuple[str, str], str] = field(default_factory=dict)
    # The queue managers of the incident whose own channel status was unseen during it (clwl.landing.evidence's gaps).
    unseen: tuple[str, ...] = ()

    @property
    def senders(self) -> list[str]:
        return sorted({w.sender for w in self.windows})

    @property
    def receivers(self) -> list[str]:
        return sorted({w.receiver for w in self.windows})

    @property
    def channels(self) -> list[tuple[str, str]]:
        """(sender, channel), sorted."""
        return sorted({(w.sender, w.channel) for w in self.windows})

    @property
    def queues(self) -> list[str]:
        return sorted({d.queue for d in self.delays})

    @property
    def applications(self) -> tuple[tuple[str, int], ...]:
        return counted(d.application for d in self.delays)

    @property
    def stuck(self) -> int:
        return sum(d.stuck for d in self.delays)

    @property
    def reallocated(self) -> int:
        return sum(d.reallocated for d in self.delays)

    @property
    def delayed(self) -> int:
        return len(self.delays)

    @property
    def longest_wait(self) -> Optional[float]:
        waits = [d.wait_seconds for d in self.delays if d.wait_seconds is not None]
        return max(waits) if waits else None

    @property
    def look_at(self) -> str:
        sender, channel = self.channels[0]
        queues = sorted({self.xmitqs[c] for c in self.channels if c in self.xmitqs})
        xmitqs = (f"its transmission queue{'s' if len(queues) > 1 else ''} {_and(queues)}" if queues
                  else "its transmission queues")
        return LOOK_AT[self.side].format(subject=self.subject, sender=sender, channel=channel, xmitqs=xmitqs)

    @property
    def what(self) -> str:
        """What happened, where and when, in one clause."""
        span = f"{_hhmm(self.start)}\u2013{_hhmm(self.end)}"
        if self.side == RECEIVER:
            return f"{self.subject} unreachable from {_and(self.senders)}, {span}"
        if self.side == SENDER:
            n = len(self.channels)
            return (f"{self.subject} lost all {n} cluster channels at {_hhmm(self.start)} ({span}, to "
                    f"{_and(self.receivers)})")
        sender, channel = self.channels[0]
        return f"{sender} \u2192 {self.subject} over {channel} not moving messages, {span}"

    @property
    def headline(self) -> str:
        """What happened and where to look, without the counts."""
        return f"{self.what}: {self.look_at}"

    @property
    def verdict(self) -> str:
        """The first screen's line: what, when, where, the messages stuck and whose, where to look."""
        if not self.delays:
            hit = "no message waited"
        else:
            names = [d.application for d in self.delays if d.stuck]
            apps = counts_text(counted(names)) if any(names) else ""  # none known: no "(unknown application 4)"
            hit = f"{self.stuck} stuck" + (f" ({apps})" if apps else "")
            if self.reallocated:
                hit += f", {self.reallocated} re-allocated"
        return f"{self.what}: {hit}: {self.look_at}"

    @property
    def unseen_text(self) -> str:
        """" QM3's own channel status was not captured during it (unseen)." when so (leading blank), else ""."""
        if not self.unseen:
            return ""
        own = "own channel status was" if len(self.unseen) == 1 else "own channel statuses were"
        return f" {_and(list(self.unseen))}'s {own} not captured during it (unseen): what it saw is not known."

    @property
    def sentence(self) -> str:
        """The headline, then the channels, the messages and who put them."""
        chans = _and([f"{s} {c}" for s, c in self.channels])
        if not self.delays:
            return f"{self.headline}.{self.unseen_text} On {chans}: no message waited."
        longest = self.longest_wait
        return (f"{self.headline}.{self.unseen_text} On {chans}: {self.delayed} message{'s' if self.delayed != 1 else ''} "
                f"delayed ({self.stuck} stuck, {self.reallocated} re-allocated), the longest wait "
                f"{_hmm(longest) if longest is not None else 'unknown'}; queues {', '.join(self.queues)}; "
                f"applications: {counts_text(self.applications)}.")


# -- the rules --------------------------------------------------------------------------------------------------
def overlaps(a_start: datetime, a_end: datetime, b_start: datetime, b_end: datetime) -> bool:
    """Half-open spans [a_start, a_end) and [b_start, b_end) intersect. A zero-length span [t, t) meets a span
    that contains t (a message seen waiting at one instant)."""
    if a_start == a_end:
        return b_start <= a_start < b_end or (b_start == b_end == a_start)
    if b_start == b_end:
        return a_start <= b_start < a_end
    return a_start < b_end and b_start < a_end


def chains(items: Sequence, start=lambda x: x.start, end=lambda x: x.end) -> list[list]:
    """``items`` split into chains of transitive overlap (rule 1's relation), each in start order."""
    out: list[list] = []
    # The open chain's span, kept as items join it: its start is its first item's (start order), its end the
    # latest end so far. Linear in the items; a day of 10M messages has channels with thousands of troubles.
    first = last = None
    for it in sorted(items, key=lambda x: (start(x), end(x))):
        if out and overlaps(start(it), end(it), first, last):
            out[-1].append(it)
            last = max(last, end(it))
        else:
            out.append([it])
            first, last = start(it), end(it)
    return out


def channel_windows(troubles: Iterable[Trouble]) -> list[Window]:
    """Rule 1: each (sender, channel, receiver)'s trouble merged into windows."""
    by_channel: dict[tuple[str, str, str], list[Trouble]] = {}
    for t in troubles:
        by_channel.setdefault((t.sender, t.channel, t.receiver), []).append(t)
    out = []
    for (sender, channel, receiver), ts in sorted(by_channel.items()):
        for chain in chains(ts):
            out.append(Window(sender, channel, receiver, min(t.start for t in chain), max(t.end for t in chain)))
    return out


def sender_chains(windows: Sequence[Window], workload: Mapping[str, Iterable[str]]) -> list[list[Window]]:
    """Rule 2's candidates: per sender, the chains of its windows that cover all of its workload channels (at
    least two)."""
    out = []
    for sender in sorted({w.sender for w in windows}):
        channels = set(workload.get(sender, ()))
        if len(channels) < 2:
            continue
        for chain in chains([w for w in windows if w.sender == sender]):
            if channels <= {w.channel for w in chain}:
                out.append(chain)
    return out


def receiver_chains(windows: Sequence[Window]) -> list[list[Window]]:
    """Rule 3's candidates: per receiver, the chains of windows with channels of at least two senders."""
    out = []
    for receiver in sorted({w.receiver for w in windows}):
        for chain in chains([w for w in windows if w.receiver == receiver]):
            if len({w.sender for w in chain}) >= 2:
                out.append(chain)
    return out


def group(windows: Sequence[Window], workload: Mapping[str, Iterable[str]]) -> list[tuple[str, str, list[Window]]]:
    """Rules 2-4 with their precedence: (side, subject, windows) per incident."""
    out: list[tuple[str, str, list[Window]]] = []
    in_receiver = {id(w) for chain in receiver_chains(windows) for w in chain}
    taken: set[int] = set()
    for chain in sender_chains(windows, workload):
        if all(id(w) in in_receiver for w in chain):
            continue  # every receiver was unreachable from others too: each receiver explains its channel
        out.append((SENDER, chain[0].sender, chain))
        taken |= {id(w) for w in chain}
    left = [w for w in windows if id(w) not in taken]
    for chain in receiver_chains(left):
        out.append((RECEIVER, chain[0].receiver, chain))
        taken |= {id(w) for w in chain}
    out += [(CHANNEL, w.receiver, [w]) for w in windows if id(w) not in taken]
    return out


def incidents(troubles: Iterable[Trouble], workload: Mapping[str, Iterable[str]],
              delays: Iterable[Delay] = ()) -> list[Incident]:
    """The day's incidents in start order, each with the delays behind its channels inside its windows.

    workload: per sender, its workload channels (rule 2). A delay belongs to the window of its (sender, channel)
    that contains ``held_from``; one outside every window is left out (it is not channel trouble)."""
    windows = channel_windows(troubles)
    found = [Incident(side, subject, min(w.start for w in ws), max(w.end for w in ws), sorted(
        ws, key=lambda w: (w.start, w.sender, w.channel))) for side, subject, ws in group(windows, workload)]
    by_channel: dict[tuple[str, str], list[tuple[Window, Incident]]] = {}
    for inc in found:
        for w in inc.windows:
            by_channel.setdefault((w.sender, w.channel), []).append((w, inc))
    for d in delays:
        for w, inc in by_channel.get((d.sender, d.channel), ()):
            if w.start <= d.held_from < w.end or d.held_from == w.start:
                inc.delays.append(d)
                break
    return sorted(found, key=lambda i: (i.start, i.side, i.subject))


def _and(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _hhmm(t: datetime) -> str:
    return t.strftime("%H:%M")


def _hmm(seconds: float) -> str:
    minutes = int(seconds) // 60
    return f"{minutes // 60}:{minutes % 60:02d}"
