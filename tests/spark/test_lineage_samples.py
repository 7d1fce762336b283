"""The lineage file `clwl run` of the samples leaves in the lake (docs/lineage.md), read with the OpenLineage
client's own model: no new run, the session's samples lake (tests/conftest.py `samples_lake`)."""

from __future__ import annotations

import json
from pathlib import Path

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState

from clwl.lake.door import GOLD_TABLES, Lake
from clwl.lake.lineage import dataset_name
from clwl.lake.lineage_stages import lineage_file


def _events(lake) -> list[RunEvent]:
    """Every line of the run's lineage file as a RunEvent of the client's model (attrs: a wrong field fails)."""
    published = Lake(lake).published()
    run_ids = set(published.dates.values())
    assert len(run_ids) == 1, run_ids  # one `clwl run` published every sample date
    path = lineage_file(Lake(lake), run_ids.pop())
    events = []
    for line in path.read_text().splitlines():
        d = json.loads(line)
        events.append(RunEvent(
            eventType=RunState[d["eventType"]], eventTime=d["eventTime"], producer=d["producer"],
            run=Run(runId=d["run"]["runId"], facets=d["run"].get("facets") or {}),
            job=Job(namespace=d["job"]["namespace"], name=d["job"]["name"]),
            inputs=[InputDataset(i["namespace"], i["name"], facets=i.get("facets") or {},
                                 inputFacets=i.get("inputFacets") or {}) for i in d.get("inputs") or []],
            outputs=[OutputDataset(o["namespace"], o["name"], facets=o.get("facets") or {})
                     for o in d.get("outputs") or []]))
    return events


def test_samples_run_lineage_names_every_gold_table_with_its_version_and_the_gates_assertions(samples_lake):
    lake = Lake(samples_lake.lake)
    events = _events(samples_lake.lake)
    published = lake.published()
    dates = sorted(published.dates)
    by_job: dict[str, list[RunEvent]] = {}
    for e in events:
        by_job.setdefault(e.job.name, []).append(e)
    # The run and its ingest once; every other stage once per date, each a START then a COMPLETE of one run id.
    assert [e.eventType for e in by_job["clwl.run"]] == [RunState.START, RunState.COMPLETE]
    for stage, n in (("clwl.ingest", 1), ("clwl.replay", len(dates)), ("clwl.detect", len(dates)),
                     ("clwl.publish", len(dates)), ("clwl.report", len(dates))):
        evs = by_job[stage]
        assert [e.eventType for e in evs] == [RunState.START, RunState.COMPLETE] * n, stage
        assert all(e.run.facets["parent"]["run"]["runId"] == by_job["clwl.run"][0].run.runId for e in evs)
    # The ingest read each landing date folder, counted: as many files as the folder holds.
    landing = {i.name: i for i in by_job["clwl.ingest"][0].inputs}
    for d in dates:
        folder = samples_lake.landing / d
        assert landing[dataset_name(folder)[1]].facets["clwlLanding"]["fileCount"] == \
            sum(1 for p in folder.rglob("*") if p.is_file())
    # The last publish: every gold table an output at the version the published pointer names, with the gate's
    # assertions (one per expectation of its suite, in the kept validation result, all passed) and the verdict.
    last = by_job["clwl.publish"][-1]
    assert last.run.facets["clwlGate"]["published"] is True
    outputs = {o.name: o for o in last.outputs}
    for table in GOLD_TABLES:
        out = outputs[dataset_name(lake.table(f"gold.{table}"))[1]]
        assert out.facets["version"]["datasetVersion"] == str(published.tables[table])
        result = json.loads((Path(last.run.facets["clwlGate"]["validationResult"]) / f"{table}.json").read_text())
        assertions = out.facets["dataQualityAssertions"]["assertions"]
        assert len(assertions) == len(result["results"]) + len(result.get("extra_checks") or [])
        assert {a["assertion"] for a in assertions} >= {r["expectation_config"]["type"] for r in result["results"]}
        assert all(a["success"] for a in assertions)
