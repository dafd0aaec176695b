"""Suites are versions: the pinned digest of each generated suite must match a fresh generation."""

from __future__ import annotations

import pytest

from replan.core.task import Task
from replan.suites import load_suite, suite_digest, suite_version, suite_versions


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


@pytest.mark.slow
@pytest.mark.parametrize("name", ["toolmaze", "pararecover-synth"])
def test_regenerating_reproduces_the_pinned_digest(name):
    """A corpus or generator change fails here: bump the version in suites/versions.json and pin
    the new digest, so that runs before and after the change are not compared as one suite."""
    pinned = suite_versions()[name]
    tasks = load_suite(name)
    assert len(tasks) == pinned["instances"]
    assert suite_digest(tasks) == pinned["digest"], (
        f"suite {name!r} changed: bump its version in src/replan/suites/versions.json and pin "
        f"digest {suite_digest(tasks)!r}"
    )
