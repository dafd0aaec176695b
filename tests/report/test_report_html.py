"""``write_report`` end to end on a hand-built store: the summary table, the C × P cells, the
first-error table, the paired comparisons, the episode drill-down, and self-containment."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
import rp_build as rb

from replan.report import REPORT_FILE, write_report
from replan.runner.store import ResultsStore

N_BOOT = 300


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, rb.Node]:
    out = rb.two_design_store(tmp_path_factory.mktemp("two-designs"))
    path = write_report(out, n_boot=N_BOOT)
    text = path.read_text(encoding="utf-8")
    return path, text, rb.parse_html(rb.inflate(text))


def _row(tree: rb.Node, unit: str) -> dict[str, str]:
    table = tree.find_all("table", class_="summary")[0]
    rows = [r for r in table.find_all("tr") if r.attrs.get("data-unit") == unit]
    assert len(rows) == 1, f"one summary row for {unit}"
    return {
        td.attrs["data-metric"]: " ".join(td.text().split())
        for td in rows[0].with_attr("data-metric")
    }


def _ci(k: int, n: int) -> str:
    lo, hi = rb.wilson(k, n)
    return f"[{lo:.2f}, {hi:.2f}]"


def test_report_is_written_beside_the_store(report: tuple[Path, str, rb.Node]) -> None:
    path, _, _ = report
    assert path.name == REPORT_FILE
    assert (path.parent / ResultsStore.FILENAME).is_file()
    plots = sorted(p.name for p in path.parent.glob("report-*"))
    assert plots == ["report-errors.svg", "report-pec.svg"]  # the heatmaps are HTML tables


def test_summary_table_has_every_design_with_intervals(report: tuple[Path, str, rb.Node]) -> None:
    _, _, tree = report
    assert _units(tree) == ["dual_loop", "react"]
    react, dual = _row(tree, "react"), _row(tree, "dual_loop")
    # react: 5 runs, 4 succeed (P1 seed 1 gives up); the prefix figures are on the 3 NP runs
    # (the store mixes NP and P1): 2 clean (NP seed 1 misses a parameter), and that run with an
    # invalid call succeeded; P1: 1 of 2 exposed runs recovered (one C x P cell, so the mean
    # over the P1-P4 cells is that cell's rate, with a bootstrap interval).
    assert react["runs"] == "5"
    # TSR: the mean over the C x P cells, as ToolMaze averages it: (3/3 NP + 1/2 P1) / 2
    assert react["TSR"].startswith("0.75 [")
    assert react["TER"] == f"0.67 {_ci(2, 3)} NP runs only"
    assert react["RR"] == f"1.00 {_ci(1, 1)} eligible n = 1"
    assert react["PRR"].startswith("0.50 [") and react["PRR"].endswith("exposed n = 2")
    # RC over the two P1 runs (seed 002 eq. 3, c* per trajectory): s0 met the fault on its first
    # call and then made the 3 calls a path needs (search again, quote, book): c = c* = 3, C_rec
    # 0; s1 failed: C_rec 1 -> 0.5
    assert react["RC"].startswith("0.50 [")
    # AUC-PEC terms of the NP runs 1, 0, 1; mean calls (3 + 4 + 3 + 4 + 1) / 5
    assert react["AUC-PEC"].startswith("0.67 [")
    assert react["calls"].startswith("3.0 [")
    # E5 is ParaRecover's: a store of ToolMaze runs does not show it as if ToolMaze defined it
    assert "E5" not in react and "tool-use eff." not in react
    assert react["failures"] == "0"
    # dual_loop: the model error is counted apart, left out of the process metrics, and counts
    # as a failed run in its own cell's success rate: (2/3 NP + 2/2 P1) / 2 = 5/6
    assert dual["runs"] == "4"
    assert dual["failures"].startswith("1") and "model_error: 1" in dual["failures"]
    assert dual["TSR"].startswith("0.83 [")
    assert dual["TER"] == f"1.00 {_ci(2, 2)} NP runs only"
    assert dual["RR"] == "– eligible n = 0"


def test_cxp_cells_per_level_and_mode(report: tuple[Path, str, rb.Node]) -> None:
    _, _, tree = report
    table = next(t for t in tree.find_all("table", class_="cxp") if t.attrs["data-unit"] == "react")
    cells = {
        td.attrs["data-cell"]: " ".join(td.text().split()) for td in table.with_attr("data-cell")
    }
    assert set(cells) == {"C1/NP", "C2/P1"}
    assert cells["C1/NP"].startswith(f"TSR 1.00 {_ci(3, 3)}")
    assert "runs 3" in cells["C1/NP"]
    assert cells["C2/P1"].startswith(f"TSR 0.50 {_ci(1, 2)}")
    assert f"PRR 0.50 {_ci(1, 2)} (exposed 2)" in cells["C2/P1"]


def test_first_error_types_table(report: tuple[Path, str, rb.Node]) -> None:
    _, _, tree = report
    table = tree.find_all("table", class_="errors")[0]
    rows = {r.attrs["data-type"]: r for r in table.find_all("tr") if "data-type" in r.attrs}
    assert len(rows) == 14  # the 14 ParaRecover types, nothing unmapped here
    counts = {
        t: {td.attrs["data-unit"]: td.text().split()[0] for td in r.with_attr("data-unit")}
        for t, r in rows.items()
    }
    assert counts["Parameter_Missing"] == {"dual_loop": "0", "react": "1"}
    assert all(
        c == {"dual_loop": "0", "react": "0"} for t, c in counts.items() if t != "Parameter_Missing"
    )


def test_paired_comparison_in_words(report: tuple[Path, str, rb.Node]) -> None:
    _, text, tree = report
    # 4 (task, seed) pairs (dual_loop's failed seed 2 leaves react's seed 2 unpaired);
    # success: only dual_loop on P1 seed 1 -> 1 discordant pair, exact p = 1
    assert "dual_loop vs react</strong> (4 paired runs)" in text
    assert (
        "no significant difference in success rate between dual_loop and react (p = 1.000)" in text
    )
    assert (
        "no significant difference in clean-run rate between dual_loop and react (p = 1.000)"
        in text
    )
    assert "too few paired runs (n = 4) to test the AUC-PEC of dual_loop and react" in text
    assert "0 run(s) of dual_loop and 1 of react had no partner" in text
    assert "failed runs left out: 1 of dual_loop, 0 of react" in text
    rows = {r.attrs["data-metric"]: r for r in tree.find_all("tr") if "data-pair" in r.attrs}
    success = [" ".join(td.text().split()) for td in rows["success"].find_all("td")]
    # pairs, first rate, second rate, difference [95% CI], p. One discordant pair of 4 (for
    # dual_loop): exact McNemar p = 1, and that test's own interval: Clopper–Pearson for
    # π = 1/1 is [0.025, 1], so the difference d/n·(2π − 1) lies in [1/4·(0.05 − 1), 1/4].
    assert success[2:5] == ["4", "1.00", "0.75"] and success[6] == "p = 1.000"
    delta, low, high = (float(x) for x in re.findall(r"[+-]\d\.\d+", success[5]))
    assert delta == 0.25 and high == 0.25
    assert low == pytest.approx(0.25 * (2 * 0.025 - 1), abs=6e-4)  # -0.2375, shown rounded


def test_episode_drill_down_lists_calls_with_verdicts(report: tuple[Path, str, rb.Node]) -> None:
    _, _, tree = report
    tasks = {d.attrs["data-task"]: d for d in tree.find_all("details") if "data-task" in d.attrs}
    assert set(tasks) == {"t-np", "t-p1"}
    eps = {
        d.attrs["data-key"]: d for d in tasks["t-np"].find_all("details") if "data-key" in d.attrs
    }
    assert len(eps) == 6  # 3 seeds x 2 designs, the failed one included
    ep = eps["t-np|react|m|1"]
    rows = [r for r in ep.find_all("tr") if "data-verdict" in r.attrs]
    assert [r.attrs["data-verdict"] for r in rows] == ["missing_param", "ok", "ok", "ok"]
    tools = [r.find_all("code")[0].text() for r in rows]
    assert tools == ["search_flights", "search_flights", "quote_flight", "book_flight"]
    assert "first error (FED)" in rows[0].text() and "fed" in rows[0].attrs["class"]
    assert "FED 1" in ep.find_all("summary")[0].text()
    failed = eps["t-np|dual_loop|m|2"]
    assert "failed (model_error)" in failed.find_all("summary")[0].text()
    assert "RateLimitError: 429 after 4 attempts" in failed.text()
    p1 = {
        d.attrs["data-key"]: d for d in tasks["t-p1"].find_all("details") if "data-key" in d.attrs
    }
    fault_row = next(r for r in p1["t-p1|react|m|0"].find_all("tr") if "data-verdict" in r.attrs)
    assert "P1 http_503 on search_flights" in fault_row.text()
    assert "fault recovered" in p1["t-p1|react|m|0"].find_all("summary")[0].text()
    assert "fault not recovered" in p1["t-p1|react|m|1"].find_all("summary")[0].text()


def test_report_is_self_contained(report: tuple[Path, str, rb.Node]) -> None:
    path, text, tree = report
    # one inline script (it opens the compressed drill-down); nothing loaded from anywhere
    assert text.lower().count("<script") == 1 and "<script>" in text
    assert "DecompressionStream('gzip')" in text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text, re.I)
    assert "@import" not in text and "url(" not in text
    imgs = tree.find_all("img")
    assert len(imgs) == 2  # PEC and first errors (the heatmaps are tables)
    embedded = set()
    for img in imgs:
        src = img.attrs["src"] or ""
        assert src.startswith("data:image/svg+xml;base64,")
        data = base64.b64decode(src.split(",", 1)[1])
        svg = ElementTree.fromstring(data)  # well-formed XML
        assert svg.tag == "{http://www.w3.org/2000/svg}svg"
        embedded.add(data)
    beside = {p.read_bytes() for p in path.parent.glob("report-*.svg")}
    assert beside == embedded


def test_missing_store_is_a_clear_error_and_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "nothing-here"
    with pytest.raises(FileNotFoundError, match="not a replan results directory"):
        write_report(target)
    assert not target.exists()


def test_empty_store_gives_a_page_saying_so(tmp_path: Path) -> None:
    ResultsStore(tmp_path).close()
    text = write_report(tmp_path, n_boot=N_BOOT).read_text(encoding="utf-8")
    rb.parse_html(text)
    assert "No episodes yet" in text


def test_drill_down_cap(tmp_path: Path) -> None:
    rb.two_design_store(tmp_path)
    text = write_report(tmp_path, n_boot=N_BOOT, max_episodes=4).read_text(encoding="utf-8")
    tree = rb.parse_html(rb.inflate(text))
    assert len([d for d in tree.find_all("details") if "data-key" in d.attrs]) == 4
    assert "6 more episode(s) not shown" in text


def test_several_models_get_one_row_each_and_plans_are_listed(tmp_path: Path) -> None:
    t = rb.task("t-p1", mode="P1", level="C2")
    eps = [
        rb.replan_episode(t, seed, "<thought>retry</thought>" + rb.PLAN_TEXT, model=m)
        for m in ("m1", "m2")
        for seed in range(2)
    ]
    rb.save(tmp_path, eps, [t])
    text = write_report(tmp_path, n_boot=N_BOOT).read_text(encoding="utf-8")
    tree = rb.parse_html(rb.inflate(text))
    assert set(_units(tree)) == {"replanner_loop · m1", "replanner_loop · m2"}
    assert "replanner_loop · m1 vs replanner_loop · m2</strong> (2 paired runs)" in text
    ep = next(
        d for d in tree.find_all("details") if d.attrs.get("data-key") == "t-p1|replanner_loop|m1|0"
    )
    plans = [d.find_all("summary")[0].text() for d in ep.find_all("details", class_="plan")]
    assert plans == ["plan 0 (planner, round 0): parses", "plan 1 (replanner, round 1): parses"]
    assert "retry" in ep.text()  # the replan's thought


def _units(tree: rb.Node) -> list[str]:
    table = tree.find_all("table", class_="summary")[0]
    return [r.attrs["data-unit"] for r in table.find_all("tr") if "data-unit" in r.attrs]


def test_pec_plot_stops_where_runs_thin_out() -> None:
    from replan.report.figures import pec_kmax

    def curve(total: int, reached: list[int]) -> list[dict]:
        return [{"k": k, "reached": r, "pec": {"n": total}} for k, r in enumerate(reached, 1)]

    # 100 runs: the 5% bar is 5 runs; k = 3 is the last with >= 5 runs that long
    assert pec_kmax([curve(100, [100, 40, 5, 4, 1])]) == 3
    # the longest-lived agent decides; 10 runs need 3 (the floor)
    assert pec_kmax([curve(100, [100, 40, 5, 4]), curve(10, [10, 9, 8, 3, 2])]) == 4
    # two runs in all: plot while both are still that long
    assert pec_kmax([curve(2, [2, 2, 1])]) == 2


def test_drill_down_is_compressed_per_task(tmp_path: Path) -> None:
    """The page stays light: each task's episode detail is stored gzip-compressed, the summary
    stays plain HTML (a 240-episode report was 5.9 MB with the detail inline)."""
    out = rb.two_design_store(tmp_path)
    with ResultsStore(out) as store:  # the same runs on 40 more tasks: a repetitive drill-down
        eps = store.episodes()
        exp = store.experiments()[0][0]
        tasks = store.tasks()
        for i in range(40):
            for ep in eps:
                t = tasks[ep.task_id].model_copy(update={"task_id": f"{ep.task_id}-{i}"})
                store.save_tasks([t])
                store.save_episode(exp, ep.model_copy(update={"task_id": t.task_id}), [])
    text = write_report(out, n_boot=N_BOOT).read_text(encoding="utf-8")
    opened = rb.inflate(text)
    blobs = re.findall(r'<div class="lazy" data-gz="', text)
    assert len(blobs) == 2 * 41  # one per task
    assert 'data-verdict="' not in text  # no step row outside the compressed blocks
    assert opened.count('data-verdict="') > 100
    assert len(text.encode()) < 0.4 * len(opened.encode())


def test_heatmaps_are_coloured_tables(report: tuple[Path, str, rb.Node]) -> None:
    """The TSR / PRR / RC heatmaps are tables (text, not pixels): each cell's value and sample
    size, coloured on ColorBrewer's RdYlGn within [0.1, 0.9] (green good; reversed for RC)."""
    _, _, tree = report
    heat = {
        (t.attrs["data-unit"], t.attrs["data-metric"]): {
            td.attrs["data-cell"]: (" ".join(td.text().split()), td.attrs["style"])
            for td in t.with_attr("data-cell")
        }
        for t in tree.find_all("table", class_="heat")
    }
    assert set(heat) == {(u, m) for u in ("react", "dual_loop") for m in ("tsr", "prr", "rc")}
    green, yellow = "#1a9850", "#ffffbf"  # RdYlGn's 10th and 6th of 11 colours: 0.9 and 0.5
    # react (see test_cxp_cells_per_level_and_mode): TSR 3/3 on C1/NP, 1/2 on C2/P1
    # black text: contrast 5.6 on that green (WCAG luminance 0.233), white 3.7
    assert heat[("react", "tsr")]["C1/NP"] == ("1.00 n=3", f"background:{green};color:#000")
    assert heat[("react", "tsr")]["C2/P1"] == ("0.50 n=2", f"background:{yellow};color:#000")
    # PRR: 1 of the 2 exposed P1 runs recovered; none exposed on NP: undefined, grey
    assert heat[("react", "prr")]["C2/P1"] == ("0.50 n=2", f"background:{yellow};color:#000")
    assert heat[("react", "prr")]["C1/NP"][0] == "– n=0"
    assert "#dddddd" in heat[("react", "prr")]["C1/NP"][1]
    # RC (lower is better) 0.5 on C2/P1: the middle of the scale
    assert heat[("react", "rc")]["C2/P1"] == ("0.50 n=2", f"background:{yellow};color:#000")
