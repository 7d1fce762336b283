"""``clwl generate``: a synthetic estate in the landing layout and real formats of ``samples/``.

    from clwl.generate import GenerateOptions, generate
    truth = generate(GenerateOptions(out="landing", seed=7, messages_per_day=100_000))

Modules: ``estate`` (the model: queue managers, queues, events, configuration state, the time rules), ``build``
(the estate built from the options and the schedule of its events), ``planned`` (``--event``: the planned
events, where they go in the schedule, their truth), ``routing`` (the independent CLWL simulation:
one sending queue manager's choices), ``simulate`` (the traffic it routes, one sender and day), ``partition``
(messages waiting behind a partition), ``ids`` (message ids and times), ``held`` (messages held behind an outage
and their browses), ``accounting`` (queue accounting counters and amqsmon records),
``render`` (runmqsc, REST JSON captures; ``samples/make_samples.py`` prints with it too), ``render_messages``
(amqsbcg, dmpmqmsg, amqsmon), ``render_puts`` (puts.csv or the amqsact activity trace of the puts),
``channel_trace`` (the channel agents' trace: each message's departure and arrival, injected channel stops),
``trace_json`` (traces printed as amqsevt JSON), ``qsg`` (``--qsg``: the queue-sharing group, its IGQ settings and
size limit, the message lengths around it), ``render_zos`` (the members' captures as z/OS CSQUTIL output),
``captures`` (what each capture shows), ``truth`` (``_generate.json``), ``landing`` (the day/slot loop that writes
the files), ``options`` (``GenerateOptions``, which the command line builds). ``landing`` is loaded only when
``generate`` runs: importing the package loads no generator, and no module here imports one that imports it back.
Standard library only.
"""

from __future__ import annotations

from clwl.generate.options import GenerateOptions


def generate(options: GenerateOptions, progress=None) -> dict:
    """Write the estate; returns the ground truth (also written to ``<out>/_generate.json``)."""
    from clwl.generate.landing import Generator, Progress

    return Generator(options, progress or Progress(options.quiet)).run()


__all__ = ["GenerateOptions", "generate"]
