"""The widget's front end: the bundle (widgets/src, built into static/) and the small loader
each GraphView carries, which finds the bundle in the one ``FrontEnd`` model of the kernel."""

from __future__ import annotations

import hashlib
from pathlib import Path

import ipywidgets
import traitlets

STATIC = Path(__file__).parent / "static"

# NOTE [the bundle as text] _esm and _css are the files' text, not their paths: given a path,
# anywidget watches the file for hot reloading and ties every widget to a class-wide signal
# with a closure over it, so no GraphView would ever be freed, nor the events it keeps.


def bundle() -> str:
    """The widget bundle's text (NOTE [the bundle as text]), or a module saying how to build it."""
    path = STATIC / "graphview.js"
    if path.exists():
        return path.read_text(encoding="utf-8")
    return (  # a working checkout always has the bundle; say how to make it if not
        "export default { render({ el }) { el.textContent = 'dyngraph: the widget bundle is "
        "missing (cd widgets && npm install && npm run build)'; } };\n"
    )


def style_sheet() -> str:
    """The widget's style sheet's text ("" when it was not built)."""
    path = STATIC / "graphview.css"
    return path.read_text(encoding="utf-8") if path.exists() else ""


# NOTE [the front end once per notebook] A notebook saved with widget state keeps every model's
# state, ``_esm`` included: with the 880 KB bundle as each view's ``_esm``, every graph carried a
# copy of it (5.47 MB for three graphs). Instead the bundle is the state of one ``FrontEnd``
# model per kernel, and each view's ``_esm`` is the small loader below: it asks the widget
# manager for that model (by the id in the view's ``front_end`` trait), imports its code once
# per page, and renders with it. The view it renders sees the bundle's text as ``_esm``, as the
# layout worker expects (NOTE [layout worker] in widgets/src/renderer.js). Live, reopened with
# the state saved, or exported with it (nbconvert, build_site), the bundle is stored once.
# anywidget's own ways to share code do not fit: ``_esm`` as a URL needs a server or the
# network, and as a file path it would tie every view to a class-wide hot-reload signal.
LOADER = """\
// dyngraph: loads the graph view's front end, stored once per notebook (FrontEnd model).
const loaded = (globalThis.__dyngraphFrontEnds ??= new Map());
async function frontEnd(model) {
  const shared = await model.widget_manager.get_model(model.get("front_end"));
  const digest = shared.get("digest");
  if (!loaded.has(digest)) {
    const code = shared.get("code");
    const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
    loaded.set(digest, import(url).then((module) => ({ module, code }))
      .finally(() => URL.revokeObjectURL(url)));
  }
  return loaded.get(digest);
}
async function render({ model, el }) {
  const { module, code } = await frontEnd(model);
  const view = {
    get: (name) => (name === "_esm" ? code : model.get(name)),
    set: (...args) => model.set(...args),
    on: (...args) => model.on(...args),
    off: (...args) => model.off(...args),
    send: (...args) => model.send(...args),
    save_changes: () => model.save_changes(),
    widget_manager: model.widget_manager,
  };
  return module.default.render({ model: view, el });
}
export default { render };
"""


class FrontEnd(ipywidgets.Widget):
    """The widget's front end (the bundle's text), one model per kernel that every GraphView
    names: NOTE [the front end once per notebook]. A plain ipywidgets model: no view of its own."""

    code = traitlets.Unicode("").tag(sync=True)
    digest = traitlets.Unicode("").tag(sync=True)  # the bundle's hash: a page imports it once

    _shared: FrontEnd | None = None

    @classmethod
    def shared(cls) -> FrontEnd:
        """This kernel's FrontEnd, made on first use (again if it was closed)."""
        if cls._shared is None or cls._shared.comm is None:
            code = bundle()
            cls._shared = cls(code=code, digest=hashlib.sha256(code.encode()).hexdigest())
        return cls._shared

