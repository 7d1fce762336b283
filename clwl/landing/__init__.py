"""The landing folder, pure Python: what a user drops and what the pipeline reads of it.

The folder's layout and names (``layout``), the file formats and how a file is recognised (``formats``), the
walk of a landing folder that the ingest and ``clwl check`` share (``discovery``), the rows held back before the
replay (``held_back``), the evidence a day has and lacks (``evidence``, ``totals``), and ``clwl check`` itself
(``check``). The parsers of each format are ``clwl.parse``'s.
"""
