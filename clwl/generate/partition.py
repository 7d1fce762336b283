"""Partitions (``--partitions``): the messages that wait on a transmission queue while every channel to the hosts
of their queue retries, and their delivery or re-allocation when one comes back. A part of
``simulate.SenderDay``."""

from __future__ import annotations

from clwl.generate.accounting import DayAccounting, interval_of
from clwl.generate.ids import MS_SUFFIX, hms

# a message waiting behind a channel of a partition: [msg_id hex, queue index, persistent, length, put ms,
# eligible for re-allocation, first key, row in csv_rows (-1: no observed columns), re-allocations, ms of the
# last re-allocation]
W_QI, W_ELIGIBLE, W_ROW, W_REALLOC, W_AT = 1, 5, 7, 8, 9


class PartitionWaits:
    """The waiting messages of ``simulate.SenderDay`` (``self.waiting``: channel key -> waiting messages)."""

    # -- partitions: messages that wait, re-allocation ----------------------------------------------------
    def _wait(self, k, qi, pers, ln, reason, t, mid) -> list:
        """A message routed to a channel of a partition (RETRYING while the other candidates are too): it
        waits on the transmission queue."""
        eligible = not reason.startswith("not re-allocatable")
        w = [mid, qi, pers, ln, t, eligible, k, -1, 0, -1]
        self.waiting.setdefault(k, []).append(w)
        if eligible:
            self.eligible_waiting += 1
        return w

    def partition_step(self, at_ms: int, captured: bool, acct: DayAccounting) -> None:
        """At a capture instant (after the changes): messages behind a channel that runs again are
        delivered; if the sending queue manager is captured here (the capture shows a failed retry of each
        channel still RETRYING), the eligible messages waiting behind a still-retrying channel are re-driven
        (steps 1-12 without advancing the rotation): they move unless their channel is still the most
        favourable; the others (zero AccountingToken) stay."""
        if not self.waiting:
            return
        router = self.router
        retrying = router.retrying
        deliver: dict[int, list[list]] = {}
        for k in sorted(self.waiting):
            if not retrying[k]:
                deliver.setdefault(k, []).extend(self.waiting.pop(k))
        if captured:
            moved: dict[int, list[list]] = {}
            for k in sorted(self.waiting):
                stay = []
                for w in self.waiting[k]:
                    if not w[W_ELIGIBLE]:
                        stay.append(w)
                        continue
                    keys = router.queue_keys(w[W_QI])
                    k2 = router.peek(keys) if keys else k
                    if k2 == k:
                        stay.append(w)
                        continue
                    w[W_REALLOC] += 1
                    w[W_AT] = at_ms
                    if retrying[k2]:
                        moved.setdefault(k2, []).append(w)
                    else:
                        deliver.setdefault(k2, []).append(w)
                self.waiting[k] = stay
            for k2, ws in moved.items():
                self.waiting.setdefault(k2, []).extend(ws)
        self.waiting = {k: ws for k, ws in self.waiting.items() if ws}
        if deliver:
            self._deliver(deliver, at_ms, acct)

    def _deliver(self, deliver: dict[int, list[list]], release_ms: int, acct: DayAccounting) -> None:
        """Delivered one second before the capture at ``release_ms`` (the channel came back, or the message
        was re-allocated at the failed retry the capture shows), in the interval that ends there."""
        interval = interval_of(release_ms // 60000) - 1
        router = self.router
        rows = self.csv_rows
        back = release_ms - 1000
        base = self.day_prefix
        for k in sorted(deliver):
            d = router.dests[k]
            cnt = byt = 0
            for w in deliver[k]:
                mid, qi, pers, ln, t, eligible, first, row, reallocs, at = w
                if self.channel_trace is not None:
                    self.channel_trace.release(self, k, mid, t, qi, ln, pers, back)
                acct.add(d.qmgr, interval, ("mca", self.sender, d.channel), self.qnames[qi], pers, (1, ln, ln, ln),
                         back + 350)
                self.routed[(qi, k)] = self.routed.get((qi, k), 0) + 1
                cnt += 1
                byt += ln + 428
                if eligible:
                    self.eligible_waiting -= 1
                if reallocs:
                    f = router.dests[first]
                    if row >= 0 and k != first:
                        text = rows[row]
                        rows[row] = text[:len(text) - len(self.obs[first]) - 1] + self.obs[k] + "\n"
                        at_put = getattr(self.out, "at_put", None)  # an activity trace records the put's choice
                        if at_put is not None:
                            qmgr, _channel, xmitq = self.obs[first].split(",")
                            at_put[mid] = (qmgr, xmitq or None)
                    self.reallocated.append({
                        "msg_id": mid, "sender": self.sender, "queue": self.qnames[qi],
                        "put_time": base + hms(t) + MS_SUFFIX[t % 1000],
                        "first_qmgr": f.qmgr, "first_channel": f.channel,
                        "final_qmgr": d.qmgr, "final_channel": d.channel, "reallocations": reallocs,
                        "reallocated_at": base + hms(at - 1000) + MS_SUFFIX[0]})
            self.partition_delivered += cnt
            self._channel_restarted(k, back, cnt, byt)
        if not self.eligible_waiting and len(rows) >= 4096:
            self.out.write("".join(rows))
            rows.clear()

    def waiting_on(self, k: int) -> int:
        return len(self.waiting.get(k, ()))
