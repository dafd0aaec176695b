"""Suites are versions: pinned digests, the frozen ToolMaze file, identities and the build tool."""

from __future__ import annotations

import gzip
import json

import pytest

from replan.core.task import Task
from replan.suites import load_suite, suite_digest, suite_version, suite_versions
from replan.suites import versions as sv


def _task(task_id: str, query: str = "q") -> Task:
    return Task(task_id=task_id, suite="toolmaze", query=query, tools=["a"])


def test_digest_depends_on_content_not_order():
    a, b = _task("t1"), _task("t2")
    assert suite_digest([a, b]) == suite_digest([b, a])
    assert suite_digest([a, b]) != suite_digest([a, _task("t2", query="other")])
    assert suite_digest([a]) != suite_digest([a, b])


def test_every_pinned_suite_has_a_version():
    pinned = suite_versions()
    assert {"toolmaze", "pararecover", "pararecover-synth"} <= set(pinned)
    assert all(suite_version(name) == v["version"] for name, v in pinned.items())


@pytest.mark.parametrize("name", ["toolmaze", "toolmaze-guided", "pararecover-synth"])
def test_a_frozen_file_holds_the_pinned_suite(name):
    pin = suite_versions()[name]
    path = sv.frozen_path(name)
    assert path.name == f"{name}-v{pin['version']}.jsonl.gz"
    tasks = sv.read_frozen(path)
    assert len(tasks) == pin["instances"] and suite_digest(tasks) == pin["digest"]
    assert path.stat().st_size < 5 * 2**20  # a reasonable package file
    assert sv.frozen_file(name, {}) == path  # the defaults are the frozen content
    assert sv.frozen_file(name, {"seed": 1}) is None  # another seed is generated


@pytest.mark.parametrize("name", ["toolmaze", "toolmaze-guided", "pararecover-synth"])
def test_stored_stats_are_those_of_the_whole_frozen_suite(name):
    """`replan suites stats` reads the figures stored when the suite was frozen; they are the
    figures of every instance loaded from the frozen file and counted."""
    from replan.suites import get_suite
    from replan.suites.__main__ import STATS

    counted = STATS[name](sv.read_frozen(sv.frozen_path(name)))
    assert sv.read_frozen_stats(name, {}) == counted
    assert get_suite(name).stats() == {"suite": name, "seed": 0, **counted}
    assert sv.read_frozen_stats(name, {"seed": 1}) is None  # another seed is counted anew


def test_pararecover_synth_loads_from_its_frozen_file(monkeypatch):
    from replan.suites import pararecover_synth

    def no_generation(*args, **kwargs):
        raise AssertionError("the generator ran")

    monkeypatch.setattr(pararecover_synth, "generate_synth", no_generation)
    frozen = sv.read_frozen(sv.frozen_path("pararecover-synth"))
    assert load_suite("pararecover-synth", limit=3) == frozen[:3]
    level2 = load_suite("pararecover-synth", levels="level-2", limit=2)
    assert level2 == [t for t in frozen if t.level == "LEVEL-2"][:2]
    with pytest.raises(AssertionError, match="generator ran"):  # other sizes are generated
        load_suite("pararecover-synth", n_level1=10)


@pytest.mark.parametrize("name", ["toolmaze", "toolmaze-guided"])
def test_the_frozen_toolmaze_file_is_in_generation_order(name):
    from replan.suites.toolmaze.levels import GOAL_PER_LEVEL, PER_LEVEL

    tasks = sv.read_frozen(sv.frozen_path(name))
    # in generation order: level-major, base task, then the modes
    ids = [t.task_id for t in tasks]
    assert ids[:6] == [f"toolmaze-C1-000-{m}" for m in ("NP", "P1", "P2", "P3", "P4")] + [
        "toolmaze-C1-001-NP"
    ]
    last = (GOAL_PER_LEVEL if name == "toolmaze" else PER_LEVEL) - 1
    assert ids[-1] == f"toolmaze-C4-{last:03d}-P4"


def test_the_step_list_suite_keeps_its_old_digest():
    """toolmaze v2's instances (step-list queries) are toolmaze-guided v2, kept loadable after
    v3 (issue 29 §3: the complete valid paths) as ``version=2``: results run on toolmaze v2
    compare with runs on it."""
    assert sv.earlier_pin("toolmaze-guided", "2")["digest"] == "aa36ad3db74e8dd4"
    old = load_suite("toolmaze-guided", version=2, levels="C3", modes="P4", limit=4)
    assert sv.suite_digest(sv.read_frozen(sv.frozen_path("toolmaze-guided", "2"))) == (
        "aa36ad3db74e8dd4"
    )
    assert sv.suite_identity("toolmaze-guided", old, {"version": "2"})["digest"] == (
        "aa36ad3db74e8dd4"
    )
    new = load_suite("toolmaze-guided", levels="C3", modes="P4", limit=4)
    # C3-003's group gen_sun_times: two chains in v2, their two mixes added in v3
    assert [len(t.valid_paths) for t in old][3] == 2
    assert [len(t.valid_paths) for t in new][3] == 4
    with pytest.raises(ValueError, match="kept as its frozen file only"):
        load_suite("toolmaze-guided", version=2, seed=3, limit=1)
    from replan.env.corpus import load_corpus
    from replan.models.simulated.visible import step_phrase

    task = load_suite("toolmaze-guided", levels="C2", modes="NP", limit=1)[0]
    tools = load_corpus().tools
    assert all(step_phrase(tools[t]).lower() in task.query.lower() for t in task.valid_paths[0])
    assert (
        sv.read_frozen(sv.frozen_path("toolmaze-guided"))[500]
        == load_suite("toolmaze-guided", levels="C2", modes="NP", limit=1)[0]
    )


def test_an_earlier_pararecover_synth_version_still_loads():
    """pararecover-synth v4 (built on toolmaze-guided v2) is kept beside v5, v6 and v7."""
    old = load_suite("pararecover-synth", version=4, limit=2)
    assert old == sv.read_frozen(sv.frozen_path("pararecover-synth", "4"))[:2]
    assert sv.suite_identity("pararecover-synth", old, {"version": 4})["digest"] == (
        "cd4ec0851507485d"
    )
    with pytest.raises(ValueError, match="kept versions: 4, 5, 6, 7 \\(pinned\\)"):
        load_suite("pararecover-synth", version=1)


def test_identity_of_a_pinned_suite_a_variant_a_data_file_and_custom_tasks():
    pin = suite_versions()["toolmaze"]
    tasks = [_task("t1"), _task("t2")]
    pinned = sv.suite_identity("toolmaze", tasks, {"per_level": 3, "seed": 0})
    assert pinned == {"name": "toolmaze", "version": pin["version"], "digest": pin["digest"]}
    # another seed is another suite: a variant with its own digest, stable across subsets
    variant = sv.suite_identity("toolmaze", tasks, {"seed": 3, "per_level": 2})
    assert variant["version"] == f"{pin['version']}+seed=3"
    assert variant["digest"] not in (pin["digest"], suite_digest(tasks))
    assert variant == sv.suite_identity("toolmaze", tasks[:1], {"seed": "3", "per_level": 9})
    # distractor tools are a variant too (the share recorded in the version)
    with_d = sv.suite_identity("toolmaze", tasks, {"seed": 0, "distractors": 0.25})
    assert with_d["version"] == f"{pin['version']}+distractors=0.25"
    # a data-file suite is identified by what was loaded
    data = sv.suite_identity("pararecover", tasks, {"path": "x"})
    assert data == {"name": "pararecover", "version": "1", "digest": suite_digest(tasks)}
    assert sv.custom_identity("toolmaze", tasks)["version"] == "custom"
    assert sv.identity_label(pinned) == f"toolmaze v{pin['version']} ({pin['digest'][:8]})"


@pytest.fixture
def pins(tmp_path, monkeypatch):
    """versions.json and the data folder in tmp_path, with suite 'toy' pinned at version 1."""
    tasks = [_task("t1"), _task("t2")]
    vfile = tmp_path / "versions.json"
    vfile.write_text(
        json.dumps({"toy": {"version": "1", "digest": suite_digest(tasks), "instances": 2}})
    )
    monkeypatch.setattr(sv, "VERSIONS_FILE", vfile)
    monkeypatch.setattr(sv, "DATA_DIR", tmp_path / "data")
    return tasks


def test_build_writes_checks_and_bumps_a_frozen_suite(pins):
    tasks = pins
    with pytest.raises(SystemExit, match="missing or not the pinned suite"):
        sv.build("toy", tasks, check=True)
    assert "-> " in sv.build("toy", tasks)
    path = sv.frozen_path("toy")
    first = path.read_bytes()
    assert sv.read_frozen(path) == tasks
    assert gzip.decompress(first).decode().count("\n") == 2
    assert "up to date" in sv.build("toy", tasks, check=True)

    # with the suite's statistics: checked, written beside the data file, read back
    def count(ts):
        return {"tasks": len(ts), "queries": sorted({t.query for t in ts})}

    with pytest.raises(SystemExit, match="stale statistics"):
        sv.build("toy", tasks, check=True, stats=count)
    assert "up to date" in sv.build("toy", tasks, stats=count)
    assert sv.read_frozen_stats("toy", {}) == {"tasks": 2, "queries": ["q"]}
    assert "up to date" in sv.build("toy", tasks, check=True, stats=count)
    # the same tasks give the same bytes (no timestamp in the gzip header)
    path.unlink()
    sv.build("toy", tasks)
    assert path.read_bytes() == first
    # changed content: refused without a reason, then frozen as version 2 with it
    changed = [tasks[0], _task("t2", query="other")]
    with pytest.raises(SystemExit, match="--bump"):
        sv.build("toy", changed)
    with pytest.raises(SystemExit, match="changed"):
        sv.build("toy", changed, bump="why", check=True)
    msg = sv.build("toy", changed, bump="a tool was added to the corpus")
    assert "version 2" in msg
    pin = sv.suite_versions()["toy"]
    assert pin == {
        "version": "2",
        "digest": suite_digest(changed),
        "instances": 2,
        "reason": "a tool was added to the corpus",
        "earlier": {"1": {"digest": suite_digest(tasks), "instances": 2}},
    }
    assert sv.read_frozen(sv.frozen_path("toy")) == changed
    # the old version stays loadable: its file is kept and named by version=1
    assert sv.frozen_file("toy", {"version": "1"}) == path
    assert sv.read_frozen(path) == tasks
    assert sv.suite_identity("toy", tasks, {"version": "1"}) == {
        "name": "toy",
        "version": "1",
        "digest": suite_digest(tasks),
    }
    with pytest.raises(ValueError, match="no version '7'; kept versions: 1, 2 \\(pinned\\)"):
        sv.frozen_file("toy", {"version": "7"})
    # the new version's statistics were not computed (no stats given)
    assert sv.read_frozen_stats("toy", {}) is None
    sv.build("toy", changed, stats=count)
    assert sv.read_frozen_stats("toy", {}) == {"tasks": 2, "queries": ["other", "q"]}
    # figures of another digest are never read as this version's
    sv.frozen_stats_path("toy").write_text(json.dumps({"digest": "0" * 16, "stats": {}}))
    assert sv.read_frozen_stats("toy", {}) is None


@pytest.mark.slow
@pytest.mark.parametrize("name", ["toolmaze", "toolmaze-guided", "pararecover-synth"])
def test_regenerating_reproduces_the_pinned_digest(name):
    """A corpus or generator change fails here: freeze the new version (``python -m
    replan.suites freeze NAME --bump REASON``), so that runs before and after are never taken
    for one suite."""
    pinned = suite_versions()[name]
    from replan.suites.__main__ import GENERATORS, STATS

    tasks = GENERATORS[name]()  # the generator itself, not the frozen file load_suite reads
    assert len(tasks) == pinned["instances"]
    assert suite_digest(tasks) == pinned["digest"], (
        f"suite {name!r} changed (digest {suite_digest(tasks)!r}): freeze the new version with "
        f"`python -m replan.suites freeze {name} --bump 'one-line reason'`"
    )
    assert sv.read_frozen(sv.frozen_path(name)) == tasks  # the frozen file, in order
    assert load_suite(name) == tasks
    assert "up to date" in sv.build(name, tasks, check=True, stats=STATS[name])


def test_loading_toolmaze_reads_the_frozen_file_not_the_generator(monkeypatch):
    """load_suite('toolmaze') never generates at the pinned seed, and gives exactly the tasks
    (ids, order and content) the generator gives for the same options."""
    from replan.suites import toolmaze

    expected = {
        "a": toolmaze.generate(per_level=2, queries="goal"),
        "b": toolmaze.generate(
            levels=["C3", "C1"], modes=["P4", "NP"], limit=1, per_level=3, queries="goal"
        ),
        "guided": toolmaze.generate(per_level=1),
    }

    def no_generation(*args, **kwargs):
        raise AssertionError("the generator ran")

    monkeypatch.setattr(toolmaze, "generate", no_generation)
    monkeypatch.setattr(toolmaze.Generator, "base_task", no_generation)
    got_a = load_suite("toolmaze", per_level=2)
    got_b = load_suite("toolmaze", levels="c3,c1", modes=["p4", "NP"], limit=1, per_level=3)
    assert got_a == expected["a"] and len(got_a) == 40
    assert [t.task_id for t in got_b] == [
        "toolmaze-C3-000-P4",
        "toolmaze-C3-000-NP",
        "toolmaze-C1-000-P4",
        "toolmaze-C1-000-NP",
    ]
    assert got_b == expected["b"]
    assert load_suite("toolmaze-guided", per_level=1) == expected["guided"]
    monkeypatch.undo()  # what the file cannot answer is the generator's to refuse
    with pytest.raises(ValueError, match="unknown ToolMaze level"):
        load_suite("toolmaze", levels=["C9"])
    with pytest.raises(ValueError, match="unknown perturbation mode"):
        load_suite("toolmaze", modes=["P9"])


def test_the_shipped_step_list_suite_overlaps_no_more_than_toolmaze():
    """ToolMaze (seed 002 §3.3) keeps every level's mean pairwise Jaccard similarity of task
    tool sets at or below 0.06. Recounted from the shipped file's raw lines, one tool set per
    base task, without replan's stats code (which the slow regeneration test reads)."""
    import itertools

    by_level: dict[str, dict[str, frozenset[str]]] = {}
    with gzip.open(sv.frozen_path("toolmaze-guided"), "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            by_level.setdefault(row["level"], {}).setdefault(
                row["base_id"], frozenset(row["tools"])
            )
    assert sorted(by_level) == ["C1", "C2", "C3", "C4"]
    for level, sets in by_level.items():
        pairs = list(itertools.combinations(sets.values(), 2))
        mean = sum(len(a & b) / len(a | b) for a, b in pairs) / len(pairs)
        assert len(sets) == 100 and mean <= 0.06, (level, round(mean, 4))
