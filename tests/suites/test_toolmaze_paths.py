"""Valid paths are every path the checker accepts (issue 29 §3; ToolMaze §3.3 step 2: a
"mathematically complete space of valid recovery strategies" over "schema-compatible
alternative tool-call paths").

The hand-worked case is ``toolmaze-guided`` C3-003, whose N-N group ``gen_sun_times`` has two
chains: ``geonames_search`` -> ``geonames_timezone`` and ``nominatim_search`` ->
``sunrise_sunset_times``. Both heads output a latitude and a longitude (kinds
``geo_latitude``/``geo_longitude``) and both tails take exactly those (plus a stated date), so
each head feeds either tail: four compositions, of which the step-list suite v2 listed two.
Under P4 (``geonames_search`` corrupted for good) agents rerouted through ``nominatim_search``
-> ``geonames_timezone``: the checker accepted the run (success 1) but no valid path avoided
the victim, so recovery scored 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from replan.core.trace import Call
from replan.env import task_world
from replan.env.checker import check
from replan.env.corpus import load_corpus
from replan.suites.versions import frozen_path, read_frozen

sys.path.insert(0, str(Path(__file__).parent))
from toolmaze_accepted import accepts, minimal_accepted_sets, slots_of, stored_bindings

FIXED = {
    "convert_timezone",
    "reminders_create",
    "reminders_snooze",
    "suggest_meeting_times",
    "schedule_meeting",
}
HEADS = ("geonames_search", "nominatim_search")
TAILS = ("geonames_timezone", "sunrise_sunset_times")


def _c3_003(mode: str):
    """The hand-worked task as frozen in ``toolmaze-guided`` v3 (its file stays loadable)."""
    return read_frozen(frozen_path("toolmaze-guided", "3"), [f"toolmaze-C3-003-{mode}"])[0]


def test_each_head_of_gen_sun_times_feeds_each_tail_by_kind():
    """The premise of the hand-worked case, read off the corpus schemas."""
    tools = load_corpus().tools

    def kinds_out(name):
        def walk(s):
            for sub in (s.get("properties") or {}).values():
                yield sub.get("x-kind")
                if sub.get("type") == "array":
                    yield from walk(sub.get("items") or {})
                elif sub.get("type") == "object":
                    yield from walk(sub)

        return set(walk(tools[name].returns)) - {None}

    for head in HEADS:
        assert {"geo_latitude", "geo_longitude"} <= kinds_out(head)
    for tail in TAILS:
        spec = tools[tail]
        needs = {(spec.param_schema(p) or {}).get("x-kind") for p in spec.required}
        assert needs == {"geo_latitude", "geo_longitude", "date"}


def test_the_mixed_paths_of_c3_003_are_valid_paths():
    task = _c3_003("NP")
    expected = {frozenset(FIXED | {h, t}) for h in HEADS for t in TAILS}
    assert {frozenset(p) for p in task.valid_paths} == expected
    assert len(task.valid_paths) == 4


def test_the_checker_accepts_the_mixed_path_run_by_hand():
    """nominatim_search -> geonames_timezone -> convert_timezone -> ... run call by call with the
    stated values: the checker accepts it, and so does the independent enumeration."""
    task = _c3_003("NP")
    lit = task.metadata["literals"]
    world = task_world(task)
    out = {}

    def call(tool, **args):
        res = world.execute(Call(tool=tool, args=args))
        assert res.ok, (tool, res.verdict)
        out[tool] = res.observation
        return res.observation

    place = call("nominatim_search", q=lit["nominatim_search.q"])["results"][0]
    sun = call(
        "geonames_timezone", lat=place["lat"], lng=place["lon"], date=lit["geonames_timezone.date"]
    )
    conv = call(
        "convert_timezone",
        date=lit["convert_timezone.date"],
        time=sun["sunrise"],
        from_timezone=lit["convert_timezone.from_timezone"],
        to_timezone=lit["convert_timezone.to_timezone"],
    )
    rem = call(
        "reminders_create",
        title=lit["reminders_create.title"],
        due_date=lit["reminders_create.due_date"],
        due_time=conv["time"],
    )
    snz = call(
        "reminders_snooze", reminder_id=rem["reminder_id"], minutes=lit["reminders_snooze.minutes"]
    )
    sug = call(
        "suggest_meeting_times",
        date=snz["due_date"],
        meetingDurationMinutes=lit["suggest_meeting_times.meetingDurationMinutes"],
    )
    call(
        "schedule_meeting",
        slot_id=sug["meetingTimeSuggestions"][0]["slotId"],
        summary=lit["schedule_meeting.summary"],
    )
    answer = "Done. " + "; ".join(f"{t}: {o}" for t, o in out.items())
    assert check(task, world.state, answer).success
    specs = load_corpus().tools
    mixed = [*sorted(FIXED), "nominatim_search", "geonames_timezone"]
    assert accepts(task, specs, mixed, slots_of(task, specs)) is True


def test_c_star_after_the_head_counts_the_mixed_path():
    """c* per victim (seed 002 eq. 3): geonames_timezone failing for good after geonames_search
    ran leaves geonames_search -> sunrise_sunset_times: 1 call + the 5 fixed ones = 6 (7 when
    only the declared chains count: nominatim_search + sunrise_sunset_times + 5)."""
    task = _c3_003("P4")
    by_victim = task.faults.min_calls_after_fault_by_victim
    assert by_victim["geonames_timezone"] == 6
    assert by_victim["sunrise_sunset_times"] == 6
    assert by_victim["geonames_search"] == 7  # fails first: nothing ran, one head + tail + 5


def test_recovered_agrees_with_success_on_c3_003_p4(tmp_path):
    """The runs of the issue: every exposed run that succeeds has recovered (it completed a
    valid path that avoids the corrupted tool), and some succeed through a mixed path."""
    import replan

    task = _c3_003("P4")
    res = replan.run(
        tasks=[task],
        agents=["react", "replanner_loop"],
        models=["simulated:expert"],
        seeds=4,
        out=tmp_path / "out",
    )
    scores: dict[str, dict[str, float | None]] = {}
    for key, metric, value, _ in res.feedback:
        scores.setdefault(key, {})[metric] = value
    mixed_successes = 0
    for ep in res.episodes:
        s = scores[ep.episode_id]
        if not s.get("toolmaze.exposed"):
            continue
        if s.get("toolmaze.success"):  # PRR is independent of success; success implies it here
            assert s.get("toolmaze.recovered") == 1.0, ep.episode_id
        clean = {st.call.tool for st in ep.steps if st.verdict.ok and st.perturbation is None}
        if s.get("toolmaze.success") and {"nominatim_search", "geonames_timezone"} <= clean:
            mixed_successes += 1
    assert mixed_successes >= 1


# -- the whole frozen suites ------------------------------------------------------------------
def _compare(name: str, level: str | None = None, limit: int | None = None):
    """Per NP task of suite ``name``: (task id, accepted sets that are no valid path and skip
    no step, valid paths the checker does not accept, undecided sets, accepted sets that skip a
    step: they leave out a call every valid path makes, or are part of a valid path)."""
    tasks = [
        t
        for t in read_frozen(frozen_path(name))
        if t.mode == "NP" and (level is None or t.level == level)
    ][:limit]
    return _compare_tasks(tasks)


def _compare_tasks(tasks):
    """:func:`_compare`'s rows for the given tasks."""
    specs = load_corpus().tools
    rows = []
    for t in tasks:
        valid = {frozenset(p) for p in t.valid_paths}
        fixed = frozenset.intersection(*valid)
        got, undecided = minimal_accepted_sets(t, specs)
        # a set that is no valid path and leaves out a call every valid path makes, or is part
        # of one valid path: a run of it passes the checker without a valid path
        skips = [s for s in got if s not in valid and (not fixed <= s or any(s < v for v in valid))]
        unlisted = [s for s in got if s not in valid and s not in skips]
        slots, bound = slots_of(t, specs), stored_bindings(t)
        rejected = [v for v in valid if not accepts(t, specs, sorted(v), slots, bound=bound)]
        rows.append((t.task_id, unlisted, rejected, undecided, skips))
    return rows


def _assert_complete(rows):
    bad = [(tid, u, r, d, s) for tid, u, r, d, s in rows if u or r or d or s]
    assert not bad, bad[:5]


def test_valid_paths_are_what_the_checker_accepts_on_the_c3_tasks():
    """A fast slice of the comparison below: the first C3 (N-N group) tasks of both suites."""
    _assert_complete(_compare("toolmaze-guided", "C3", 6))
    _assert_complete(_compare("toolmaze", "C3", 6))


def test_no_run_that_skips_a_step_passes_on_the_first_c1_tasks():
    """A fast slice: the first ten C1 tasks of both suites. On ``toolmaze`` v3, C1-008 passed
    without ``get_order_status`` (its checked total is also ``buy_now``'s)."""
    _assert_complete(_compare("toolmaze", "C1", 10))
    _assert_complete(_compare("toolmaze-guided", "C1", 10))


@pytest.mark.parametrize("task_id", ["toolmaze-C4-042-NP", "toolmaze-C4-060-NP"])
def test_the_two_guided_c4_tasks_v4_left_open(task_id):
    """``toolmaze-guided`` v4 (its file stays loadable): C4-042 passed a run without
    ``owm_daily_forecast``, whose pop of 80 the checker read inside the id ``DOC-80AB46D1`` a
    later call made; C4-060's four valid paths were rejected, the enumeration running
    ``mark_invoice_paid`` before ``send_invoice`` (alphabetical order). Both close: a number in
    an id states nothing, and a set runs in the task's listed order."""
    tasks = read_frozen(frozen_path("toolmaze-guided", "4"), [task_id])
    _assert_complete(_compare_tasks(tasks))


#: toolmaze-guided C4 lists up to 19 tools a task: its whole level (all clean on v5) takes about
#: 12 min on two shared cores, so the test run checks its first 10 (and C4-042 and C4-060 of
#: v4 above, the two tasks v4 left open; docs/metrics.md).
LEVEL_LIMIT = {("toolmaze-guided", "C4"): 10}


@pytest.mark.slow
@pytest.mark.parametrize("level", ["C1", "C2", "C3", "C4"])
@pytest.mark.parametrize("name", ["toolmaze", "toolmaze-guided"])
def test_valid_paths_are_what_the_checker_accepts_on_every_task(name, level):
    """Over every base task of the frozen suite (toolmaze-guided C4: its first 10): each valid
    path is accepted, each minimal accepted tool set is a valid path (none skips a step), nothing
    undecided (0.1-0.4 s of CPU a task; toolmaze-guided C4 about 7 s a task)."""
    _assert_complete(_compare(name, level, LEVEL_LIMIT.get((name, level))))
