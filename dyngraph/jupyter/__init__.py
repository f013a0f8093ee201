"""The Python side of the widgets: GraphView (anywidget), watch(), the %%dyngraph magic.

Imported only on demand (``dg.watch`` and ``%load_ext dyngraph`` import it): the engine never
imports widget, IPython or plotting libraries.
"""

from .view import GraphView
from .watch import load_ipython_extension, watch

__all__ = ["GraphView", "load_ipython_extension", "watch"]
