"""The configured share of each destination: what the engine (clwl/engine/router.py) sends where from one configuration,
with every channel running. The one computation of it: the report's configured shares (clwl/report/shares.py),
``clwl drift``, ``clwl advise`` and ``clwl blast`` all ask here.

When the steps before 12 leave several candidates and nothing stateful remains (``Router.lru_prepared``: no
CLWLMRUC below the number of channels), step 12 chooses the least recently used: each choice adds 1000 / CLWLWGHT
to the chosen candidate's DestSeqFactor and the lowest factor goes next. After W messages, W the sum of the
candidates' weights, every candidate has been chosen exactly its weight's number of times, so the share of
candidate i is exactly w_i / W. Otherwise the engine routes ROUTED_MESSAGES messages and counts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from clwl.engine.algorithm import Request
from clwl.engine.model import ClusterView
from clwl.engine.router import Route, Router

#: Messages the engine routes per queue and snapshot when step 12 alone does not decide (CLWLMRUC, or a step
#: before 12 that chooses one destination).
ROUTED_MESSAGES = 1000


def steady(view: ClusterView) -> ClusterView:
    """The view with every channel RUNNING: the configuration without its outages."""
    return replace(view, channels=tuple(replace(c, state="RUNNING") for c in view.channels))


def engine_shares(view: ClusterView, queue: str, profile: str = "default") -> dict[str, float]:
    """Per destination queue manager, the percentage of ``queue``'s messages the engine sends there from
    ``view`` (routed as put by an application on the sending queue manager); empty when the put fails. Exact
    when step 12 alone decides (the module's docstring), else counted over ROUTED_MESSAGES messages."""
    router = Router(view, profile)
    request = Request(queue)
    prep = router.lru_prepared(request)
    shares: Counter[str] = Counter()
    if prep is not None:  # step 12 alone, over the engine's own candidates and weights
        total = sum(prep.weights)
        for cand, weight in zip(prep.cands, prep.weights):
            shares[cand.qmgr] += 100.0 * weight / total
        return dict(shares)
    counts = Counter(r.qmgr for r in router.route_many(request, ROUTED_MESSAGES) if isinstance(r, Route))
    return {qmgr: 100.0 * n / ROUTED_MESSAGES for qmgr, n in counts.items()}
