"""The Python side of the widgets: GraphView (anywidget), watch(), the %%dyngraph magic.

Imported only on demand, through the package's front door (``dg.watch`` in a notebook,
``%load_ext dyngraph``, and the player that ``Recording.to_html`` and pictures with no Graphviz
reach through ``dyngraph.player``): the engine never imports widget, IPython or plotting
libraries. They come with the jupyter extra; without it, importing this package says so
(``dyngraph.extras``) rather than failing on the first missing module.
"""

from ..extras import needs

with needs("jupyter", "The live graph widget (dg.watch() in a notebook, GraphView, HTML pages)"):
    from .view import GraphView
    from .watch import load_ipython_extension, watch

__all__ = ["GraphView", "load_ipython_extension", "watch"]
