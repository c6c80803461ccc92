"""Execute every notebook in notebooks/ at FEDTHEORY_NOTEBOOK_SIZE=small; any cell error fails its test."""
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebooks extra (nbformat, nbclient) is not installed")
nbclient = pytest.importorskip("nbclient", reason="the notebooks extra (nbformat, nbclient) is not installed")

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, monkeypatch):
    # the kernel inherits this process's environment: small sizes and a non-interactive backend
    monkeypatch.setenv("FEDTHEORY_NOTEBOOK_SIZE", "small")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    errors = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors


def test_notebooks_are_stored_without_outputs():
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not cell.get("outputs"), f"{path.name}: commit notebooks with outputs stripped"
