"""In a notebook, a node's ``where`` names the cell its code lives in (IPython's In[n]).

Run in a real kernel (nbclient): a function defined in one cell and called from a later one
makes nodes that point at the defining cell; top-level code points at its own cell.
"""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_where_names_the_cell_that_holds_the_code():
    # imported here, not at collection: nbformat's schema validator takes a second to import,
    # and `make quick` (-m "not slow") never runs this test
    nbformat = pytest.importorskip("nbformat", reason="the jupyter extra is missing")
    nbclient = pytest.importorskip("nbclient", reason="the jupyter extra is missing")
    cells = [
        "import dyngraph as dg\ndef double(t):\n    return t * 2",
        "with dg.record() as rec:\n    x = dg.tensor([1.0], requires_grad=True)\n"
        "    y = double(x)\n    z = y + 1",
        "print(sorted({(n.op, n.where[3], n.where[1]) for n in rec.nodes.values()\n"
        "              if n.op in ('Mul', 'Add')}))",
    ]
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3")
    client.execute()
    printed = notebook.cells[2].outputs[0]["text"].strip()
    # Mul is made by double(), defined in cell 1 (line 3); Add at the top level of cell 2 (line 4)
    assert printed == "[('Add', 2, 4), ('Mul', 1, 3)]"
