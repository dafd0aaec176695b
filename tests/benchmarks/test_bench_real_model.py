"""``benchmarks/bench_real_model.py`` on the simulated model (its path, not its numbers): the
slice run on two worker processes stores exactly what one process stores, and the table covers
the instances that have all four designs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from replan.runner.store import ResultsStore

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_real_model.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_real_model", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stored(out: Path, keys: list[str]) -> dict[str, tuple]:
    with ResultsStore(out) as store:
        return {
            k: (ep.task_id, ep.design, ep.end_reason, ep.success, [s.call for s in ep.steps])
            for k, ep in store.episodes_by_key(keys).items()
        }


def test_two_workers_store_what_one_process_stores(tmp_path):
    bench = _bench()
    cfg, keys = bench.slice_config("simulated:competent", per_cell=1, filter=["NP"])
    assert len(keys) == 4 * 4  # C1-C4 x NP, one each, four designs
    ran_one, _ = bench.run_slice(cfg, tmp_path / "one")
    ran_two, _ = bench.run_slice(cfg, tmp_path / "two", workers=2)
    assert ran_one == ran_two == 16
    one, two = _stored(tmp_path / "one", keys), _stored(tmp_path / "two", keys)
    assert set(one) == set(two) == set(keys)
    assert one == two
    text, _ = bench.stored_table(tmp_path / "two", keys, "simulated:competent")
    assert "4 of the slice's 4 instances have all four designs stored" in text
    assert "in progress" not in text


def test_a_fresh_checkout_prints_the_table_from_the_archive_alone(tmp_path):
    """The slice run with an archive, then its table in another directory from the archive
    alone (nothing run): the same table."""
    bench = _bench()
    cfg, keys = bench.slice_config("simulated:competent", per_cell=1, filter=["NP"])
    archive = tmp_path / "slice.jsonl"
    ran, _ = bench.run_slice(cfg, tmp_path / "one", archive=archive)
    assert ran == 16 and len(archive.read_text().splitlines()) == 16
    assert bench.run_slice(cfg, tmp_path / "fresh", archive=archive, run=False)[0] == 0
    assert _stored(tmp_path / "fresh", keys) == _stored(tmp_path / "one", keys)
    one = bench.stored_table(tmp_path / "one", keys, "simulated:competent")[0]
    assert bench.stored_table(tmp_path / "fresh", keys, "simulated:competent")[0] == one
    # nothing archived yet: nothing stored, nothing run
    assert bench.run_slice(cfg, tmp_path / "none", archive=tmp_path / "no.jsonl", run=False)[0] == 0
    with ResultsStore(tmp_path / "none") as store:
        assert store.done_keys() == set()


def test_the_committed_smollm2_archive_still_fills_the_whole_slice(tmp_path):
    """The committed SmolLM2 archive matches the slice's tasks (suite, queries, modes): a
    change of the default suite that made every archived episode 'run again' fails here, not
    in a user's fresh clone."""
    bench = _bench()
    cfg, keys = bench.slice_config("local:smollm2")
    assert len(keys) == 160
    assert (
        bench.run_slice(cfg, tmp_path / "fresh", archive=bench.DEFAULT_ARCHIVE, run=False)[0] == 0
    )
    text, _ = bench.stored_table(tmp_path / "fresh", keys, "local:smollm2")
    assert "40 of the slice's 40 instances have all four designs stored" in text
