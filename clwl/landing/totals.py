"""Record totals over a set of files: what an ingest run counted (spark.ingest.run_log.IngestSummary) and what
``clwl check`` says an ingest would count (clwl.analyses.check.LandingCheck), computed one way for both, so the two always
add up alike: rows read = rows accepted + rows quarantined."""

from __future__ import annotations


class RecordTotals:
    """Totals over ``self.files`` (each with records_read / records_accepted / records_quarantined)."""

    files: list

    @property
    def records_read(self) -> int:
        return sum(f.records_read for f in self.files)

    @property
    def records_accepted(self) -> int:
        return sum(f.records_accepted for f in self.files)

    @property
    def records_quarantined(self) -> int:
        return sum(f.records_quarantined for f in self.files)
