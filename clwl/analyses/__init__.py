"""What the product says about a day, from the engine and the lake: the analyses behind the report and commands.

Incidents and their remedies (``incidents``, ``remedies``), the distribution against the configuration
(``distribution``), what the channel agents were seen doing (``observed``, ``observed_columns``), configuration
findings and drift (``lint``, ``drift``), advice and blast radius (``advise``, ``advise_blocks``, ``blast``,
``blast_traffic``), what-ifs (``whatif``) and one message's story (``explain``).
"""
