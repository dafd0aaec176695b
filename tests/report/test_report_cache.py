"""A report is drawn once per store state: its plots are redrawn only when what they show
changed, a page written from the same store, code and options is not written again, and no
failed write replaces a good file."""

from __future__ import annotations

from pathlib import Path

import pytest
import rp_build as rb

from replan.report import write_report
from replan.runner.store import ResultsStore

N_BOOT = 200


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per figure matplotlib renders from here on."""
    from matplotlib.figure import Figure

    calls: list[int] = []
    real = Figure.savefig

    def counting(self: Figure, *args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", counting)
    return calls


def test_second_report_on_unchanged_store_draws_nothing(tmp_path: Path, drawn: list[int]) -> None:
    out = rb.two_design_store(tmp_path)
    page = write_report(out, n_boot=N_BOOT, max_episodes=10)
    assert len(drawn) == 2  # PEC and first errors
    pngs = {p.name: p.read_bytes() for p in out.glob("report-*.png")}
    assert sorted(pngs) == ["report-errors.png", "report-pec.png"]
    # other options: the page is written again (fewer episodes listed), the plots are reused
    drawn.clear()
    write_report(out, n_boot=N_BOOT, max_episodes=1)
    assert drawn == []
    assert "more episode(s) not shown" in page.read_text(encoding="utf-8")
    assert {p.name: p.read_bytes() for p in out.glob("report-*.png")} == pngs
    # the same options on the same store: nothing is read or written
    before = page.stat().st_mtime_ns, page.stat().st_ino
    write_report(out, n_boot=N_BOOT, max_episodes=1)
    assert (page.stat().st_mtime_ns, page.stat().st_ino) == before
    assert drawn == []


def test_a_changed_store_redraws_and_rewrites(tmp_path: Path, drawn: list[int]) -> None:
    out = rb.two_design_store(tmp_path)
    page = write_report(out, n_boot=N_BOOT)
    first = page.read_text(encoding="utf-8")
    drawn.clear()
    with ResultsStore(out) as store:  # one more react run: what PEC shows changes
        ep = next(e for e in store.episodes() if e.design == "react" and e.mode == "NP")
        store.save_episode(store.experiments()[0][0], ep.model_copy(update={"seed": 7}), [])
    write_report(out, n_boot=N_BOOT)
    assert drawn  # PEC at least
    react_runs = '<td class="l">react</td><td data-metric="runs">{}</td>'
    assert react_runs.format(5) in first
    assert react_runs.format(6) in page.read_text(encoding="utf-8")


def test_damaged_or_stale_plot_files_are_replaced(tmp_path: Path, drawn: list[int]) -> None:
    out = rb.two_design_store(tmp_path)
    write_report(out, n_boot=N_BOOT)
    pec = out / "report-pec.png"
    good = pec.read_bytes()
    pec.write_bytes(good[: len(good) // 2])  # truncated: its digest chunk is still there
    (out / "report-tsr.png").write_bytes(good)  # an older version's heatmap
    drawn.clear()
    write_report(out, n_boot=N_BOOT)
    assert len(drawn) == 1
    assert pec.read_bytes() == good
    assert not (out / "report-tsr.png").exists()


def test_png_digest_round_trip() -> None:
    from replan.report import figures

    png = figures.draw("errors", {"Parameter_Missing": {"a": 0.5, "b": None}})
    assert figures.png_digest(png) is None
    stamped = figures.with_digest(png, "abc123")
    assert figures.png_digest(stamped) == "abc123"
    assert figures.png_digest(stamped[:-1]) is None  # no IEND
    damaged = bytearray(stamped)
    damaged[len(damaged) // 2] ^= 0xFF
    assert figures.png_digest(bytes(damaged)) is None


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
