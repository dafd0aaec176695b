"""A report is written once per store state: a page written from the same store, code and
options is not written again (nor its plots drawn), its SVG plots are drawn with it otherwise,
a damaged plot file beside it is replaced, and no failed write replaces a good file."""

from __future__ import annotations

from pathlib import Path

import pytest
import rp_build as rb

from replan.report import write_report
from replan.runner.store import ResultsStore

N_BOOT = 200


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of every plot drawn from here on."""
    from replan.report import figures

    calls: list[str] = []
    real = figures.draw

    def counting(name: str, shown: object) -> str:
        calls.append(name)
        return real(name, shown)

    monkeypatch.setattr(figures, "draw", counting)
    return calls


def _files(out: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("report-*")}


def test_second_report_on_unchanged_store_draws_nothing(tmp_path: Path, drawn: list[str]) -> None:
    out = rb.two_design_store(tmp_path)
    page = write_report(out, n_boot=N_BOOT, max_episodes=10)
    assert drawn == ["pec", "errors"]
    plots = _files(out)
    assert sorted(plots) == ["report-errors.svg", "report-pec.svg"]
    # other options: the page is written again (fewer episodes listed); the plots are the same
    # and their files are left as they are
    write_report(out, n_boot=N_BOOT, max_episodes=1)
    assert "more episode(s) not shown" in page.read_text(encoding="utf-8")
    assert _files(out) == plots
    # the same options on the same store: nothing is read, drawn or written
    drawn.clear()
    before = page.stat().st_mtime_ns, page.stat().st_ino
    write_report(out, n_boot=N_BOOT, max_episodes=1)
    assert (page.stat().st_mtime_ns, page.stat().st_ino) == before
    assert drawn == []


def test_a_changed_store_redraws_and_rewrites(tmp_path: Path, drawn: list[str]) -> None:
    out = rb.two_design_store(tmp_path)
    page = write_report(out, n_boot=N_BOOT)
    first = page.read_text(encoding="utf-8")
    pec = (out / "report-pec.svg").read_bytes()
    drawn.clear()
    with ResultsStore(out) as store:  # one more react run: what PEC shows changes
        ep = next(e for e in store.episodes() if e.design == "react" and e.mode == "NP")
        store.save_episode(store.experiments()[0][0], ep.model_copy(update={"seed": 7}), [])
    write_report(out, n_boot=N_BOOT)
    assert "pec" in drawn and (out / "report-pec.svg").read_bytes() != pec
    react_runs = '<td class="l">react</td><td data-metric="runs">{}</td>'
    assert react_runs.format(5) in first
    assert react_runs.format(6) in page.read_text(encoding="utf-8")


def test_damaged_or_stale_plot_files_are_replaced(tmp_path: Path, drawn: list[str]) -> None:
    out = rb.two_design_store(tmp_path)
    write_report(out, n_boot=N_BOOT)
    pec = out / "report-pec.svg"
    good = pec.read_bytes()
    pec.write_bytes(good[: len(good) // 2])  # truncated: the page is otherwise up to date
    for old in ("report-tsr.png", "report-pec.png"):  # older versions' plots
        (out / old).write_bytes(b"\x89PNG\r\n\x1a\n")
    drawn.clear()
    write_report(out, n_boot=N_BOOT)
    assert drawn == ["pec", "errors"]
    assert pec.read_bytes() == good
    assert sorted(p.name for p in out.glob("report-*")) == ["report-errors.svg", "report-pec.svg"]


def test_failed_write_keeps_the_good_file(tmp_path: Path) -> None:
    from replan.runner.export import write_atomic

    target = tmp_path / "report.html"
    target.write_text("good", encoding="utf-8")

    def chunks():
        yield b"partial "
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, chunks())
    assert target.read_text(encoding="utf-8") == "good"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left
    write_atomic(target, [b"new"])
    assert target.read_bytes() == b"new"
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask
