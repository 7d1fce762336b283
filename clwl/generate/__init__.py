"""``clwl generate``: a synthetic estate in the landing layout and real formats of ``samples/``.

    from clwl.generate import GenerateOptions, generate
    truth = generate(GenerateOptions(out="landing", seed=7, messages_per_day=100_000))

Modules: ``estate`` (queue managers, queues, events, configuration state), ``simulate`` (the independent
CLWL simulation and the traffic it routes), ``render`` (runmqsc, REST JSON, amqsbcg, dmpmqmsg, amqsmon,
puts.csv or the amqsact activity trace of the puts; ``samples/make_samples.py`` prints with it too), ``channel_trace``
(the channel agents' trace: each message's departure and arrival, injected channel stops), ``trace_json`` (traces
printed as amqsevt JSON), ``qsg`` (``--qsg``: the queue-sharing group, its IGQ settings and size limit, the
message lengths around it), ``render_zos`` (the members' captures as z/OS CSQUTIL output), ``landing`` (the day/slot loop that writes the
files and ``_generate.json``), ``options`` (``GenerateOptions``, which the command line builds). ``landing`` is
loaded only when ``generate`` runs: importing the package loads no generator, and no module here imports one
that imports it back.
Standard library only.
"""

from __future__ import annotations

from clwl.generate.options import GenerateOptions


def generate(options: GenerateOptions, progress=None) -> dict:
    """Write the estate; returns the ground truth (also written to ``<out>/_generate.json``)."""
    from clwl.generate.landing import Generator, Progress

    return Generator(options, progress or Progress(options.quiet)).run()


__all__ = ["GenerateOptions", "generate"]
