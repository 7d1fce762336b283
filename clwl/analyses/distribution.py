"""The distribution verdicts, pure: is a destination's share of the messages what the replay predicts?

For observed destinations (per sending queue manager, queue and hour) a chi-square goodness-of-fit test over
the group's destinations, with the standardised residual naming the odd one out; for a receiver's queue
accounting interval, whose count the replay predicts exactly, a two-sided Poisson test of that one count. And
the sentence that says what the configuration in force says about a destination (spark/detect.py writes both
into gold distribution).
"""

from __future__ import annotations

import math
from datetime import datetime

from clwl.engine.model import state_tier
from clwl.engine.replay import Snapshot

ALPHA = 0.01  # significance level of the goodness-of-fit test
RESIDUAL = 2.0  # |observed - expected| / sqrt(expected) beyond which one destination is the odd one out
MIN_GROUP = 20  # fewer observations than this in a group: insufficient data
MIN_EXPECTED = 5.0  # the chi-square approximation needs expected counts of about 5 or more


def chi_square_sf(x: float, dof: int) -> float:
    """P(X > x) for a chi-square variable with ``dof`` degrees of freedom (regularised upper gamma)."""
    if dof <= 0:
        return 1.0
    if x <= 0:
        return 1.0
    a, z = dof / 2.0, x / 2.0
    # Series for the lower incomplete gamma when z < a + 1, continued fraction otherwise (Numerical Recipes).
    if z < a + 1:
        term = total = 1.0 / a
        n = a
        for _ in range(1000):
            n += 1
            term *= z / n
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-z + a * math.log(z) - math.lgamma(a)))
    b, c, d = z + 1 - a, 1e300, 1.0 / (z + 1 - a)
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return min(1.0, math.exp(-z + a * math.log(z) - math.lgamma(a)) * h)


def judge_group(expected: dict[str, float], observed: dict[str, int]) -> tuple[float | None, dict[str, str]]:
    """p-value of the group and a verdict per destination."""
    dests = sorted(set(expected) | set(observed))
    n_obs, n_exp = sum(observed.values()), sum(expected.values())
    if n_obs < MIN_GROUP or n_exp <= 0 or len(dests) < 2:
        return None, {d: "insufficient data" for d in dests}
    scale = n_obs / n_exp  # compare shares: the totals can differ (lost accounting, late records)
    exp = {d: expected.get(d, 0.0) * scale for d in dests}
    if any(0 < e < MIN_EXPECTED for e in exp.values()):
        return None, {d: "insufficient data" for d in dests}
    chi, dof = 0.0, -1
    for d in dests:
        e, o = exp[d], observed.get(d, 0)
        if e == 0:
            if o:
                return 0.0, {x: ("unexpected" if (exp[x] == 0 and observed.get(x, 0)) else "expected") for x in dests}
            continue
        chi += (o - e) ** 2 / e
        dof += 1
    p = chi_square_sf(chi, dof)
    verdicts = {}
    for d in dests:
        e, o = exp[d], observed.get(d, 0)
        resid = abs(o - e) / math.sqrt(e) if e > 0 else float("inf")
        verdicts[d] = "unexpected" if p < ALPHA and resid > RESIDUAL else "expected"
    return p, verdicts


def judge_count(expected: float, observed: int) -> tuple[float | None, str]:
    """One receiver's interval: the replay predicts the count exactly, so any deviation beyond counting noise
    (messages crossing an interval boundary) is unexplained. Two-sided normal approximation of a Poisson
    count with continuity correction."""
    if expected < MIN_EXPECTED and observed < MIN_EXPECTED:
        return None, "insufficient data"
    z = max(0.0, abs(observed - expected) - 0.5) / math.sqrt(max(expected, 1.0))
    p = math.erfc(z / math.sqrt(2))
    return p, ("unexpected" if p < ALPHA else "expected")


def explain(timeline: list[Snapshot], queue: str, dest: str, start: datetime, end: datetime,
            verdict: str, expected: float, observed: int) -> str:
    """Plain words for what the configuration in force during [start, end) says about this destination."""
    at_start = [s for s in timeline if s.time <= start][-1:]
    in_force = at_start + [s for s in timeline if start < s.time < end]
    notes: list[str] = []
    for s in in_force:
        v = s.view
        inst = [i for i in v.instances if i.queue == queue]
        chans = {c.qmgr: c for c in v.channels}
        weights = {i.qmgr: chans[i.qmgr].clwlwght for i in inst if i.qmgr in chans}
        if dest in weights and len(set(weights.values())) > 1:
            notes.append("CLWLWGHT " + ", ".join(f"{q} {w}" for q, w in sorted(weights.items())))
        for i in inst:
            if i.qmgr == dest and not i.put_enabled:
                notes.append(f"{dest}'s instance PUT(DISABLED) from {s.time:%H:%M}")
            if i.qmgr == dest and i.local and (i.clwluseq == "LOCAL" or (i.clwluseq == "QMGR" and
                                                                          v.qmgr.clwluseq == "LOCAL")):
                notes.append("local instance preferred (CLWLUSEQ LOCAL)")
        c = chans.get(dest)
        if c is not None:
            if state_tier(c.state) >= 2:
                notes.append(f"channel {c.name} {c.state} at {s.time:%H:%M}")
            if c.suspended:
                notes.append(f"{dest} suspended")
            prios = {q: ch.clwlprty for q, ch in chans.items() if q in weights}
            if len(set(prios.values())) > 1:
                notes.append("channel CLWLPRTY " + ", ".join(f"{q} {p}" for q, p in sorted(prios.items())))
            ranks = {q: ch.clwlrank for q, ch in chans.items() if q in weights}
            if len(set(ranks.values())) > 1:
                notes.append("channel CLWLRANK " + ", ".join(f"{q} {p}" for q, p in sorted(ranks.items())))
        if v.qmgr.clwlmruc < len(weights):
            notes.append(f"CLWLMRUC({v.qmgr.clwlmruc})")
    seen, uniq = set(), []
    for n in notes:
        if n not in seen:
            seen.add(n)
            uniq.append(n)
    if verdict == "unexpected":
        head = f"observed {observed} against {expected:.1f} expected"
        return head + ("; the configuration in force (" + "; ".join(uniq) + ") does not account for it"
                       if uniq else "; no configuration change or channel event explains it")
    if verdict == "insufficient data":
        return f"too few messages to test ({observed} observed)"
    return "as the configuration predicts" + (": " + "; ".join(uniq) if uniq else "")
