"""``clwl generate``: a synthetic estate in the landing layout and real formats of ``samples/``.

    from clwl.generate import GenerateOptions, generate
    truth = generate(GenerateOptions(out="landing", seed=7, messages_per_day=100_000))

Modules: ``estate`` (queue managers, queues, events, configuration state), ``simulate`` (the independent
CLWL simulation and the traffic it routes), ``render`` (runmqsc, REST JSON, amqsbcg, dmpmqmsg, amqsmon),
``landing`` (the day/slot loop that writes the files and ``_generate.json``), ``command`` (the CLI).
Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass
class GenerateOptions:
    out: str
    seed: int = 1
    qmgrs: int = 9
    clusters: int = 1
    queues: int = 4
    instances: int = 3
    senders: int = 2
    days: int = 2
    start_date: date = date(2026, 11, 19)
    messages_per_day: int = 20_000
    outages: float = 1.0
    suspends: float = 0.5
    weight_changes: float = 1.0
    priority_changes: float = 0.5
    put_disabled: float = 0.5
    bind_open_share: float = 0.03
    bind_group_share: float = 0.03
    named_qmgr_share: float = 0.01
    skew: int = 1
    skew_factor: float | None = None
    broken_records: int = 5
    rest_qmgrs: int = 1
    observed_every: int = 6
    browse_cap: int = 2000
    unresolved_outage: bool = True
    force: bool = False
    quiet: bool = False
    partitions: float = 0.0  # per day; 0 keeps the estates of earlier versions byte-identical


def generate(options: GenerateOptions, progress=None) -> dict:
    """Write the estate; returns the ground truth (also written to ``<out>/_generate.json``)."""
    from clwl.generate.landing import Generator, Progress

    return Generator(options, progress or Progress(options.quiet)).run()


__all__ = ["GenerateOptions", "generate"]
