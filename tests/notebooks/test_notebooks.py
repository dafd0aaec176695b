"""Every notebook under notebooks/ runs top to bottom, offline, with the venv's own kernel.

The stored notebooks carry no outputs; the test executes an in-memory copy with ``cwd`` =
``notebooks/`` and never writes outputs back.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from replan.samples import PARARECOVER_SAMPLE

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
NAMES = [
    "01_quickstart.ipynb",
    "02_evaluate_your_agent.ipynb",
    "03_pararecover.ipynb",
    "04_langsmith.ipynb",
    "05_your_tools.ipynb",
]
SAMPLE = PARARECOVER_SAMPLE
KERNEL = "replan-test-python"


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kernel spec that runs *this* interpreter (the venv), whatever else is installed."""
    base = tmp_path_factory.mktemp("jupyter")
    spec = base / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "replan venv", "language": "python"})
    )
    return base


def _execute(name: str, kernel_dir: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    from jupyter_client.kernelspec import KernelSpecManager

    monkeypatch.setenv("JUPYTER_PATH", str(kernel_dir))
    for var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
        monkeypatch.setenv(var, "false")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=300,
        kernel_name=KERNEL,
        kernel_manager_class="jupyter_client.manager.KernelManager",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.kernel_spec_manager = KernelSpecManager(kernel_dirs=[str(kernel_dir / "kernels")])
    client.execute()
    return nb


def _text(nb: object) -> str:
    out = []
    for cell in nb.cells:  # type: ignore[attr-defined]
        for o in cell.get("outputs", []):
            out.append(o.get("text", "") or json.dumps(o.get("data", {}).get("text/plain", "")))
    return "\n".join(out)


def test_stored_notebooks_are_stripped_and_valid() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == NAMES
    for name in NAMES:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        nbformat.validate(nb)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                assert cell.outputs == [], f"{name} cell {i} has stored outputs"
                assert cell.execution_count is None, f"{name} cell {i} has an execution count"


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_offline(
    name: str, kernel_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (NOTEBOOKS / name).read_bytes()
    nb = _execute(name, kernel_dir, monkeypatch)
    errors = [
        o
        for cell in nb.cells  # type: ignore[attr-defined]
        for o in cell.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors
    assert (NOTEBOOKS / name).read_bytes() == before, "the test must not write outputs back"
    text = _text(nb)
    # each notebook shows what it promises (the executed copy, not the stored one)
    expect = {
        "01_quickstart.ipynb": ["FED =", "ParaRecover type:", "dual_loop", "replanner_loop"],
        "02_evaluate_your_agent.ipynb": ["my_agent", "pairs", "success rate"],
        "03_pararecover.ipynb": ["instances", "sde.pass@1", "sde.E5"],
        "04_langsmith.ipynb": ["runs evaluated", "prefix.ter", "95% CI"],
        "05_your_tools.ipynb": [
            "P1 PRR with_retry",
            "McNemar",
            # a restored database: every seed pays; without it only the first (2 of 6 runs)
            "no restore: TSR 0.33 over 6 runs",
            "   restore: TSR 1.00 over 6 runs",
            "tool-error rate",
            "report:",
        ],
    }[name]
    for needle in expect:
        assert needle in text, f"{name}: {needle!r} missing from the outputs"
