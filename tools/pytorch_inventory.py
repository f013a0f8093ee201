"""Count the PyTorch names that the material learners use reaches for (issue 37, item 3).

    PYTHONPATH=$PWD python tools/pytorch_inventory.py [--mirrors /work/.mirror]

reads the corpora below from their git mirrors (bare clones, one commit each, named in CORPORA),
parses every Python file, notebook code cell and d2l PyTorch code block with ``ast``, and counts

- attribute chains that start at a name bound to torch (``torch.zeros``, ``nn.Linear``,
  ``F.relu``, ``optim.Adam``, ``torch.utils.data.DataLoader``), through the file's own imports
  (``import torch.nn.functional as F``, ``from torch.utils.data import DataLoader``); a chain
  is cut at its first part that is not a module (``nn.Module.__init__`` counts as
  ``torch.nn.Module``), and only chains that exist in the installed torch are kept;
- method and attribute names used on anything else (``x.view(...)``, ``loss.backward()``,
  ``model.parameters()``) that ``torch.Tensor``, ``torch.nn.Module`` or
  ``torch.optim.Optimizer`` define. Receivers have no types here, so ``a.reshape`` on a numpy
  array or ``s.split`` on a string count too: these rows are an upper bound.

A *place* is one file (a script, a notebook, one d2l section). For each name it writes the
number of uses, of places, which corpora, and whether dyngraph has it now (looked up the way a
program would: ``dg.<name>``, ``dg.nn.<name>``, ``dg.nn.functional.<name>``, ``dg.optim``,
``dg.utils.data``, ``dg.Tensor``, ``dg.nn.Module``, ``dg.optim.Optimizer``), or why not
(OUT_OF_SCOPE). Output: docs/pytorch_inventory.csv (every name) and docs/pytorch_inventory.md
(the counts, then every name used in more than one place).
"""

from __future__ import annotations

import argparse
import ast
import csv
import importlib
import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Corpus:
    name: str           # how the inventory names it
    mirror: str         # the folder under --mirrors (owner+repo)
    note: str           # where it comes from, for the page
    include: str        # a regular expression over paths in the repository
    exclude: str = r"^$"


CORPORA = [
    Corpus("tutorials", "chizi15+pytorch_tutorials_test",
           "the PyTorch tutorials' beginner_source (a 2024-09 copy of pytorch/tutorials: the "
           "original is over the mirror's size limit)", r"^beginner_source/.*\.py$"),
    Corpus("d2l", "d2l-ai+d2l-en", "d2l-en's chapters, the PyTorch code blocks",
           r"^chapter_.*\.md$"),
    Corpus("fastai", "fastai+course22p2", "fast.ai course22p2's notebooks (miniai/ is exported "
           "from them, so it is left out)", r"^nbs/.*\.ipynb$"),
    Corpus("nanoGPT", "karpathy+nanoGPT", "karpathy/nanoGPT", r"\.py$"),
    Corpus("makemore", "karpathy+makemore", "karpathy/makemore", r"\.py$"),
    Corpus("examples", "pytorch+examples", "pytorch/examples", r"\.py$"),
    Corpus("annotated", "harvardnlp+annotated-transformer",
           "the Annotated Transformer (the .py; the notebook is made from it)",
           r"^the_annotated_transformer\.py$"),
]

# NOTE [out of scope] Names a teaching engine on numpy does not take on, and why. A row whose
# name starts with one of these prefixes says so instead of "not yet".
OUT_OF_SCOPE = {
    "torch.cuda": "no CUDA runtime here; dg.cuda.is_available() is the one probe",
    "torch.backends": "backend switches of PyTorch's kernels",
    "torch.distributed": "multi-process training",
    "torch.multiprocessing": "multi-process training",
    "torch.nn.parallel": "multi-device training",
    "torch.nn.DataParallel": "multi-device training",
    "torch.jit": "TorchScript compiler",
    "torch.compile": "graph compiler",
    "torch.onnx": "ONNX export",
    "torch.fx": "graph capture",
    "torch.export": "graph capture",
    "torch.profiler": "PyTorch's profiler",
    "torch.autograd.profiler": "PyTorch's profiler",
    "torch.amp": "mixed precision",
    "torch.cpu.amp": "mixed precision",
    "torch.utils.tensorboard": "TensorBoard writer",
    "torch.utils.cpp_extension": "C++ extensions",
    "torch.hub": "downloads pretrained models",
    "torch.quantization": "quantized kernels",
    "torch.ao": "quantized kernels",
    "torch.mps": "Apple GPU runtime",
    "torch.xpu": "Intel GPU runtime",
    "torch.accelerator": "accelerator runtime",
    "torch.nn.NonDynamicallyQuantizableLinear": "PyTorch-internal Linear of MultiheadAttention",
    "torch.set_float32_matmul_precision": "kernel precision switch",
    "torch.use_deterministic_algorithms": "kernel switch: dyngraph's kernels are deterministic",
    "torch.autocast": "mixed precision",
    "torch.bfloat16": "numpy has no bfloat16",
    "torch.futures": "asynchronous RPC",
    "torch.sparse_coo_tensor": "sparse tensors",
    "Tensor.to_sparse": "sparse tensors",
    "torch.serialization": "PyTorch's file format (dg.save/dg.load write a pickle of their own)",
    "torch.utils.data.distributed": "multi-process training",
    "torch.trace": "the name is dyngraph's tracer (dg.trace); the matrix trace is x.trace()",
    "Module.cuda": "no CUDA runtime here",
    "Tensor.cuda": "no CUDA runtime here",
    "Tensor.pin_memory": "no CUDA runtime here",
    "Tensor.is_cuda": "no CUDA runtime here",
}

# NOTE [receivers without types] Method rows count any receiver; for these names the
# material's uses are almost all of something else.
NOT_TENSOR_USES = {
    "Tensor.values": "mostly dict.values(); Tensor.values() is for sparse tensors",
    "Tensor.index": "list.index() / str.index(); not a public Tensor method",
    "Tensor.resize": "PIL's Image.resize(); Tensor.resize is deprecated in PyTorch",
}

TORCH_CLASSES = {"Tensor": torch.Tensor, "Module": torch.nn.Module,
                 "Optimizer": torch.optim.Optimizer}
ABSENT: Counter[str] = Counter()  # files a mirror lists without their text, per corpus
DEFAULT_ALIASES = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional",
                   "optim": "torch.optim"}


# ----------------------------------------------------------------------------- reading


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], check=True, capture_output=True,
                          text=True).stdout


def sources(corpus: Corpus, mirrors: Path):
    """(path, [code chunks]) of each file of ``corpus`` at its mirror's HEAD."""
    mirror = mirrors / corpus.mirror / "repo"
    for path in git(mirror, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
        if not re.search(corpus.include, path) or re.search(corpus.exclude, path):
            continue
        shown = subprocess.run(["git", "-C", str(mirror), "show", f"HEAD:{path}"],
                               capture_output=True, text=True)
        if shown.returncode:  # NOTE: a mirror may list its largest files without their text
            ABSENT[corpus.name] += 1
            continue
        text = shown.stdout
        if path.endswith(".ipynb"):
            chunks = notebook_cells(text)
        elif path.endswith(".md"):
            chunks = d2l_pytorch_blocks(text)
        else:
            chunks = [text]
        if chunks:
            yield path, chunks


def notebook_cells(text: str) -> list[str]:
    cells = json.loads(text).get("cells", [])
    return [strip_magics("".join(c["source"]) if isinstance(c["source"], list) else c["source"])
            for c in cells if c.get("cell_type") == "code"]


def d2l_pytorch_blocks(text: str) -> list[str]:
    """The ``{.python .input}`` blocks d2l runs for PyTorch: tagged ``%%tab pytorch`` (alone or
    in a list), or untagged (shared by every framework)."""
    blocks = []
    for block in re.findall(r"```\{\.python \.input[^}]*\}\n(.*?)```", text, flags=re.S):
        first = block.lstrip().split("\n", 1)[0]
        if first.startswith("%%tab") and "pytorch" not in first:
            continue
        blocks.append(strip_magics(block))
    return blocks


def strip_magics(code: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in code.split("\n"))


# ----------------------------------------------------------------------------- counting


def torch_name(dotted: str) -> tuple[str, object] | None:
    """``dotted`` cut after its first part that is not a module, and what it names, if torch
    has it."""
    parts = dotted.split(".")
    obj, kept = torch, ["torch"]
    for part in parts[1:]:
        if part.startswith("__"):
            break
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - torch.classes raises RuntimeError for any name
            try:
                obj = importlib.import_module(".".join(kept + [part]))
            except Exception:  # noqa: BLE001 - no such module (or torch.classes, again)
                return None
        kept.append(part)
        if not isinstance(obj, type(torch)):
            break
    return ".".join(kept), obj


def method_owner(attr: str) -> str | None:
    """"Tensor", "Module", "Optimizer" or a pair like "Module/Optimizer" (``state_dict``):
    each class of PyTorch that has ``attr``."""
    if attr.startswith("_"):
        return None
    owners = [owner for owner, cls in TORCH_CLASSES.items() if attr in dir(cls)]
    return "/".join(owners) or None


class Counting(ast.NodeVisitor):
    """Counts the torch names of one file; its imports carry over from chunk to chunk."""

    def __init__(self):
        self.aliases: dict[str, str] = dict(DEFAULT_ALIASES)
        self.uses: Counter[str] = Counter()

    def visit_Import(self, node):
        for a in node.names:
            if a.name == "torch" or a.name.startswith("torch."):
                self.aliases[a.asname or a.name.split(".")[0]] = (
                    a.name if a.asname else a.name.split(".")[0])

    def visit_ImportFrom(self, node):
        if node.module and (node.module == "torch" or node.module.startswith("torch.")):
            for a in node.names:
                if a.name != "*":
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def visit_Attribute(self, node):
        chain, root = [], node
        while isinstance(root, ast.Attribute):
            chain.append(root.attr)
            root = root.value
        chain.reverse()
        if isinstance(root, ast.Name) and root.id in self.aliases:
            found = torch_name(".".join([self.aliases[root.id], *chain]))
            if found and found[0] != "torch":
                self.uses[re.sub(r"^torch\.nn\.modules\.\w+\.", "torch.nn.", found[0])] += 1
            return  # the chain is counted whole; its inner Attribute nodes are not methods
        owner = method_owner(node.attr)
        if owner:
            self.uses[f"{owner}.{node.attr}"] += 1
        self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.aliases \
                and node.id not in DEFAULT_ALIASES:
            found = torch_name(self.aliases[node.id])  # DataLoader, imported by name
            if found and not isinstance(found[1], type(torch)):
                self.uses[found[0]] += 1


def count_file(chunks: list[str]) -> Counter[str]:
    counting = Counting()
    for chunk in chunks:
        try:
            tree = ast.parse(chunk)
        except SyntaxError:
            continue  # a notebook cell of shell lines, a d2l fragment: nothing to count
        counting.visit(tree)
    return counting.uses


# ----------------------------------------------------------------------------- coverage


def dyngraph_has(name: str) -> bool:
    import dyngraph as dg

    places = {"torch.nn.functional.": dg.nn.functional, "torch.nn.init.": dg.nn.init,
              "torch.nn.utils.": dg.nn.utils, "torch.nn.": dg.nn, "torch.optim.lr_scheduler.":
              dg.optim.lr_scheduler, "torch.optim.": dg.optim, "torch.autograd.": dg.autograd,
              "torch.": dg, "Tensor.": dg.Tensor, "Module.": dg.nn.Module,
              "Optimizer.": dg.optim.Optimizer}
    if name.startswith("torch.utils."):
        try:
            module = importlib.import_module("dyngraph.utils." + name.split(".")[2])
        except ImportError:
            return False
        return _has_path(module, name.split(".")[3:])
    owners, _, attr = name.partition(".")
    if "/" in owners or owners in ("Tensor", "Module", "Optimizer"):  # every owner must have it
        return all(_has_path(places[owner + "."], [attr]) for owner in owners.split("/"))
    for prefix, module in places.items():
        if name.startswith(prefix):
            return _has_path(module, name[len(prefix):].split("."))
    return False


def _has_path(obj, parts: list[str]) -> bool:
    for part in parts:
        if not part:
            continue
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - the helpful AttributeError of dyngraph/missing.py
            return False
    return True


def status(name: str) -> str:
    if name in NOT_TENSOR_USES:
        return f"out of scope: {NOT_TENSOR_USES[name]}"
    if dyngraph_has(name):
        return "covered"
    for prefix, why in OUT_OF_SCOPE.items():
        if name == prefix or name.startswith(prefix + "."):
            return f"out of scope: {why}"
    return "not yet"


# ----------------------------------------------------------------------------- main


@dataclass
class Row:
    name: str
    count: int = 0
    places: set[str] = field(default_factory=set)
    corpora: Counter[str] = field(default_factory=Counter)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    parser.add_argument("--before", nargs=2, metavar=("COMMIT", "CSV"),
                        help="an earlier run's CSV, to say how many were covered at COMMIT")
    args = parser.parse_args()

    rows: dict[str, Row] = {}
    files = Counter()
    commits = {}
    for corpus in CORPORA:
        commits[corpus.name] = git(args.mirrors / corpus.mirror / "repo", "rev-parse",
                                   "HEAD").strip()
        for path, chunks in sources(corpus, args.mirrors):
            files[corpus.name] += 1
            for name, n in count_file(chunks).items():
                row = rows.setdefault(name, Row(name))
                row.count += n
                row.places.add(f"{corpus.name}:{path}")
                row.corpora[corpus.name] += 1
    ordered = sorted(rows.values(), key=lambda r: (-len(r.places), -r.count, r.name))
    statuses = {r.name: status(r.name) for r in ordered}
    write_csv(args.out / "pytorch_inventory.csv", ordered, statuses)
    before = None
    if args.before:
        with open(args.before[1], newline="") as f:
            before = (args.before[0], {row["name"] for row in csv.DictReader(f)
                                       if row["dyngraph"] == "covered"})
    write_page(args.out / "pytorch_inventory.md", ordered, statuses, files, commits, before)
    shared = [r for r in ordered if len(r.places) > 1]
    print(f"{len(ordered)} names, {len(shared)} in more than one place; of those "
          f"{sum(statuses[r.name] == 'covered' for r in shared)} covered, "
          f"{sum(statuses[r.name] == 'not yet' for r in shared)} not yet", file=sys.stderr)


def corpora_text(row: Row) -> str:
    return " ".join(f"{c}:{n}" for c, n in sorted(row.corpora.items()))


def write_csv(path: Path, rows: list[Row], statuses: dict[str, str]) -> None:
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["name", "count", "places", "corpora", "dyngraph"])
        for r in rows:
            out.writerow([r.name, r.count, len(r.places), corpora_text(r), statuses[r.name]])


def write_page(path: Path, rows: list[Row], statuses: dict[str, str], files: Counter,
               commits: dict[str, str], before: tuple[str, set[str]] | None) -> None:
    shared = [r for r in rows if len(r.places) > 1]
    tally = Counter(statuses[r.name].split(":")[0] for r in shared)
    if before:  # "covered (new)": not covered at the earlier commit
        statuses = {name: "covered (new)" if s == "covered" and name not in before[1] else s
                    for name, s in statuses.items()}
    lines = [
        "# The PyTorch surface learners use",
        "",
        "Counted by `tools/pytorch_inventory.py` (issue 37, item 3): every `torch.*`, `nn.*`, "
        "`F.*`, `optim.*`, `torch.utils.*` name and every method or attribute name of "
        "`Tensor`, `Module` and `Optimizer` in the material below, parsed with `ast`. A *place* "
        "is one file. Method rows count any receiver (a numpy `a.reshape` too): an upper bound. "
        "Every name is in `pytorch_inventory.csv`; this page lists those used in more than one "
        "place. Regenerate with `PYTHONPATH=$PWD python tools/pytorch_inventory.py`.",
        "",
        "| corpus | files read | files absent | commit | what |",
        "|---|---:|---:|---|---|",
    ]
    for c in CORPORA:
        lines.append(f"| {c.name} | {files[c.name]} | {ABSENT[c.name]} | "
                     f"`{commits[c.name][:10]}` | {c.note} |")
    lines += [
        "",
        f"- names found: **{len(rows)}**",
        f"- used in more than one place: **{len(shared)}**",
        f"- of those, covered by dyngraph: **{tally['covered']}**; out of scope: "
        f"**{tally['out of scope']}**; not yet: **{tally['not yet']}**",
        *([f"- covered at `{before[0]}`: **{sum(r.name in before[1] for r in shared)}**; "
           "the rest of the covered rows say *covered (new)*"] if before else []),
        "",
        "| name | uses | places | corpora | dyngraph |",
        "|---|---:|---:|---|---|",
    ]
    for r in shared:
        lines.append(f"| `{r.name}` | {r.count} | {len(r.places)} | {corpora_text(r)} | "
                     f"{statuses[r.name]} |")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
