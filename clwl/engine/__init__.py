"""The routing engine: the cluster workload management algorithm and what it works on, pure Python.

A queue manager's view of its cluster (``model``, ``view``), the algorithm's steps in the order of the reference
(``algorithm``, over ``candidates``), the transmission queue and path a choice takes (``xmitq``, ``qsg`` for
intra-group queuing), the state a day carries between messages (``state``, ``shares``), and the router that replays
one message (``router``) or a whole day (``replay``). Imports no other wing of ``clwl``: the engine is what
everything else is built on.
"""
