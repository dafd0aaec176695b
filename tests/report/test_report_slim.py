"""The summary and the report keep episodes without their traces (memory flat in the number of
episodes) and show exactly what they showed with the whole episodes in memory."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from replan.evaluators import scoring_stamp
from replan.report import html
from replan.report.data import collect, stored_scores
from replan.report.html import episodes_section
from replan.runner.experiment import LocalBackend, RunConfig, arun
from replan.runner.store import ResultsStore


def test_slim_scores_and_drill_down(tmp_path, monkeypatch):
    out = tmp_path / "r"
    cfg = RunConfig(agents=["react", "dual_loop"], limit=3, concurrency=2)
    asyncio.run(arun(cfg, out, backend=LocalBackend(2)))
    with ResultsStore(out) as store:
        tasks = store.tasks()
        full = stored_scores(store, tasks)
        slim = stored_scores(store, tasks, slim=True)
        paged = list(store.iter_scored_episodes(scoring_stamp(), page=2))
        assert [(e.to_json(), d, r) for e, d, r in paged] == [
            (e.to_json(), d, r) for e, d, r in store.scored_episodes(scoring_stamp())
        ]
        episodes = [e for e, _, _ in paged]
        assert store.episodes_by_key([]) == {}
    assert [s.by_metric for s in slim] == [s.by_metric for s in full]
    assert all(not s.episode.steps for s in slim) and any(s.episode.steps for s in full)
    data = collect(out)
    assert data.slim and all(not e.steps for e in data.episodes)
    whole = replace(data, episodes=episodes, slim=False)
    assert episodes_section(data) == episodes_section(whole)
    assert episodes_section(data, 2) == episodes_section(whole, 2)
    monkeypatch.setattr(html, "TRACE_PAGE", 1)  # the traces read a task at a time
    assert episodes_section(data) == episodes_section(whole)


def test_finish_reads_the_store_once(tmp_path, monkeypatch):
    import io
    import json

    from rich.console import Console

    from replan.cli.run import finish
    from replan.report.summary import summarize

    out = tmp_path / "r"
    cfg = RunConfig(agents=["react"], limit=2, concurrency=2)
    outcome = asyncio.run(arun(cfg, out, backend=LocalBackend(2)))
    reads = []
    original = ResultsStore.iter_scored_episodes

    def counting(self, *args, **kwargs):
        reads.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ResultsStore, "iter_scored_episodes", counting)
    got = finish(out, outcome, as_json=True, console=Console(file=io.StringIO()), cfg=cfg)
    assert len(reads) == 1  # the summary and the report from one read
    assert (out / "report.html").is_file()
    assert got["designs"] == json.loads(json.dumps(summarize(out, outcome.keys), default=str))
