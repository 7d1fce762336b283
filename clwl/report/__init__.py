"""The report people read: ``<reports>/<run_date>/report.html`` (one self-contained file: charts embedded as base64
PNG, a few lines of inline JavaScript to sort and filter the tables, nothing fetched) and ``summary.md``
(Markdown, with the same charts as PNG files beside it), both rendered from the Jinja2 templates in
``clwl/report/templates/``.

The order answers the administrator first: findings, each a sentence with its numbers (what is stuck, grouped by
channel, reason and time window; which distributions are unexpected and why; on how many traced puts the replay
agrees with MQ's own answer, every disagreement listed, and why puts traced at LOW have none); then the stuck
groups (the messages behind a disclosure), configured against replayed against observed shares (the configured
ones routed by the engine itself: clwl/report/shares.py), the replay per queue, the channels (troubled ones
first, transmission queue depth where browses exist); the technical run summary last.

It runs without Spark: the lake is read with deltalake and pandas through clwl.lake.door (``read``), one run date
gathered into a :class:`Day`, and each section of :data:`SECTIONS` (``build``) fills its part of the
:class:`Report` from it. pandas, matplotlib and jinja2 (the pipeline extra) are needed by this package only:
nothing else of clwl imports it.

Modules: ``model`` (Day, Report, the formatting), ``read`` (the lake), one module per group of sections
(``stuck``, ``distribution``, ``agreement``, ``shares``, ``channels``), and ``build`` (the sections in order,
the templates, :func:`write_report`).
"""

from clwl.report.build import SECTIONS, TEMPLATES, Place, Section, build_report, render_html, render_md, write_report
from clwl.report.model import Day, Report
from clwl.report.read import gather

__all__ = ["SECTIONS", "TEMPLATES", "Day", "Place", "Report", "Section", "build_report", "gather", "render_html",
           "render_md", "write_report"]
