"""Queue accounting: the counters the simulation keeps per receiver, interval, connection and queue, and the
amqsmon records written from them (with the injected skews)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from fractions import Fraction

import clwl.generate.render_messages as RM
from clwl.generate.estate import ACCTINT, RESTART_MIN, iso


class DayAccounting:
    """Queue accounting counters of one day: (receiver, interval, connection, queue) -> counters.

    Counters: [count non-persistent, count persistent, bytes np, bytes p, min np, max np, min p, max p].
    """

    def __init__(self):
        self.cells: dict[tuple, list[int]] = {}
        self.first_arrival: dict[tuple[str, tuple], int] = {}  # (receiver, connection) -> ms of day

    def add(self, receiver: str, interval: int, conn: tuple, queue: str, pers: int, counts: Sequence[int],
            arrival_ms: int) -> None:
        """``counts``: the messages, their bytes, the smallest and the largest (more items are not read)."""
        n, nbytes, mn, mx = counts[0], counts[1], counts[2], counts[3]
        fk = (receiver, conn)
        if arrival_ms < self.first_arrival.get(fk, 1 << 62):
            self.first_arrival[fk] = arrival_ms
        key = (receiver, interval, conn, queue)
        c = self.cells.get(key)
        if c is None:
            c = self.cells[key] = [0, 0, 0, 0, 0, 0, 0, 0]
        c[pers] += n
        c[2 + pers] += nbytes
        if c[4 + 2 * pers] == 0 or mn < c[4 + 2 * pers]:
            c[4 + 2 * pers] = mn
        c[5 + 2 * pers] = max(c[5 + 2 * pers], mx)


def interval_of(minute_of_day: int) -> int:
    """Accounting interval index (ACCTINT from the 05:00 restart) of a minute of the day."""
    return (minute_of_day - RESTART_MIN) * 60 // ACCTINT


class AccountingWriter:
    """The accounting of ``landing.Generator``: one accounting.amqsmon per receiver and day, skews injected."""

    # -- accounting -------------------------------------------------------------------------------
    def write_accounting(self, day: date, acct: DayAccounting) -> None:
        est = self.est
        base = datetime(day.year, day.month, day.day)
        if self.zos:  # z/OS accounts in SMF type 116 records, not amqsmon: the members write no accounting
            acct.cells = {key: c for key, c in acct.cells.items() if key[0] not in self.zos}
        # injected skews
        for sk in self.skew_plan:
            if sk["day"] != day:
                continue
            totals: dict[tuple[str, int, str], int] = {}
            for (recv, iv, _conn, queue), c in acct.cells.items():
                totals[(recv, iv, queue)] = totals.get((recv, iv, queue), 0) + c[0] + c[1]
            taken = {(x["receiver"], x["interval"], x["queue"]) for x in self.skews if x["day"] == day.isoformat()}
            cands = sorted((k for k, v in totals.items() if k not in taken), key=lambda k: (-totals[k], k))
            if not cands:
                continue
            top = totals[cands[0]]
            pool = [k for k in cands if totals[k] >= max(1, top // 2)]
            rng = random.Random(f"clwl-generate/{self.o.seed}/skew/{sk['n']}")
            recv, iv, queue = pool[rng.randrange(len(pool))]
            f = sk["factor"]
            before = after = 0
            for (r2, iv2, _conn, q2), c in sorted(acct.cells.items()):
                if (r2, iv2, q2) != (recv, iv, queue):
                    continue
                for p in (0, 1):
                    n_old = c[p]
                    n_new = int(n_old * f + Fraction(1, 2))
                    before += n_old
                    after += n_new
                    if n_old:
                        c[2 + p] = int(c[2 + p] * n_new / n_old) if n_new else 0
                    c[p] = n_new
                    if n_new == 0:
                        c[4 + 2 * p] = c[5 + 2 * p] = 0
            i0 = base + timedelta(minutes=5 * 60, seconds=iv * 1800)
            self.skews.append({"day": day.isoformat(), "receiver": recv, "queue": queue, "interval": iv,
                               "interval_start": iso(i0), "interval_end": iso(i0 + timedelta(seconds=1800)),
                               "factor": str(f), "true_count": before, "written_count": after,
                               "delta": after - before})
        by_recv: dict[str, list] = {}
        for (recv, iv, conn, queue), c in acct.cells.items():
            by_recv.setdefault(recv, []).append((iv, conn, queue, c))
            t = self.accounting_truth.setdefault(day.isoformat(), {}).setdefault(recv, {})
            t[queue] = t.get(queue, 0) + c[0] + c[1]
        for recv in sorted(by_recv):
            q = est.qmgrs[recv]
            conns = sorted({conn for _, conn, _, _ in by_recv[recv]})
            records = []
            for ci, conn in enumerate(conns):
                rows = sorted((iv, queue, c) for iv, cn, queue, c in by_recv[recv] if cn == conn)
                h = hashlib.sha256(f"{recv}/{conn}/{day}".encode()).digest()
                if conn[0] == "mca":
                    name, user = "amqrmppa", "mqm"
                else:
                    app = next(a for apps in est.apps.values() for a in apps.values() if a.name == conn[1])
                    name, user = app.name, app.user
                pid, tid = 2000 + int.from_bytes(h[:2], "big") % 28000, 1 + h[2] % 40
                cid = (b"AMQC" + recv.ljust(12).encode()[:12] + bytes([0x5B, 0x40 + ((day.toordinal() >> 7) & 0x3F),
                                                                      day.toordinal() & 0x7F, 0x10 + ci % 0x60])
                       + bytes([0x02, 0x29, h[3] & 0x7F, h[4] & 0x7F]))
                opened: dict[str, datetime] = {}
                seq = 0
                ivs = sorted({iv for iv, _, _ in rows})
                for iv in ivs:
                    i0 = base + timedelta(minutes=5 * 60, seconds=iv * 1800)
                    i1 = i0 + timedelta(seconds=1800)
                    start = i0
                    if seq == 0:  # a connection's first record starts when it connected (just before its
                        first = acct.first_arrival[(recv, conn)] - 15  # first put), to the second
                        start = max(i0, base + timedelta(seconds=first // 1000))
                    groups = [(queue, c) for iv2, queue, c in rows if iv2 == iv]
                    rec = RM.accounting_head(RM.AccountingConnection(q, cid, name, pid, tid, user), start, i1, seq,
                                             len(groups))
                    for gi, (queue, c) in enumerate(groups):
                        first = queue not in opened
                        if first:
                            opened[queue] = start
                        rec += RM.queue_group(gi, queue, est.instance(queue, recv).created, first, opened[queue], c)
                    records.append((i1, name, conn, seq, rec))
                    seq += 1
            records.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
            self.write(day, recv, "accounting.amqsmon", RM.render_amqsmon([r[4] for r in records]))
