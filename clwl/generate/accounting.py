"""Queue accounting: the counters the simulation keeps per receiver, interval, connection and queue, and the
amqsmon records written from them (with the injected skews)."""

from __future__ import annotations

from clwl.generate.estate import ACCTINT, RESTART_MIN


class DayAccounting:
    """Queue accounting counters of one day: (receiver, interval, connection, queue) -> counters.

    Counters: [count non-persistent, count persistent, bytes np, bytes p, min np, max np, min p, max p].
    """

    def __init__(self):
        self.cells: dict[tuple, list[int]] = {}
        self.first_arrival: dict[tuple[str, tuple], int] = {}  # (receiver, connection) -> ms of day

    def add(self, receiver: str, interval: int, conn: tuple, queue: str, pers: int, n: int, nbytes: int,
            mn: int, mx: int, arrival_ms: int) -> None:
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
