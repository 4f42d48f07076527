"""The package's import structure: the layering contract of docs/ARCHITECTURE.md.

Enforced here, from the import graph that grimp builds by parsing every
module (imports inside functions included):

1. every module of the package is placed in exactly one layer of ``LAYERS``;
2. a module imports only modules of layers strictly below its own (so there
   are no upward imports, no imports between modules of the same layer, and
   therefore no import cycles);
3. no import cycles, checked directly as well (a chain back from the
   imported module to the importer);
4. imports sit at the top of each module: an ``import`` inside a function or
   class is allowed only for matplotlib and dask (heavy, optional);
5. no ``matplotlib.use`` outside ``icl_symbolic/cli/`` and no ``pyplot``
   anywhere in the package (figures are built as ``matplotlib.figure.Figure``
   in :mod:`icl_symbolic.plotting`, so a notebook's backend is never touched).

Not seen by the graph: ``importlib.import_module`` calls.  The package has one,
:func:`icl_symbolic.verification.runner._needs_available`, which imports the library
modules named by a check kind's ``needs`` (modules its check module already
imports at the top), to report a claim as "unavailable" rather than crash.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

PACKAGE = "icl_symbolic"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

#: Top to bottom.  Names are relative to the package; ``x.*`` is every submodule of
#: ``x`` not listed elsewhere; "" is the package's own ``__init__``.
LAYERS = (
    ("__main__",),
    ("cli",),                                   # the command table
    ("cli.*",),                                 # one module per command
    ("cli._args",),                             # argument helpers shared by the commands
    ("",),                                      # the package root: re-exports the public API
    ("api",),                                   # the public Python API
    ("verification", "verification.report"),
    ("verification.runner",),
    ("verification.claimfile",),
    ("verification.checks",),                         # the table of check kinds
    ("verification.checks.*",),                       # one module per paper unit
    ("verification.checks.common",),
    ("verification.registry", "verification.judge", "verification.diagnose", "verification.evidence"),
    ("kernel_ladder",),                         # the kernel learner's gap ladder (our extension)
    ("figures", "extrapolate", "kernel_sim", "slip_recall"),
    ("simulation", "kernel", "slip_curves"),
    ("theory", "appendix_c"),
    ("gamma_error", "stieltjes", "a1zero"),
    ("moments",),
    ("library", "prompts", "covariance", "slips"),
    ("hermite",),
    ("gauss",),
    ("expr",),
    ("orthopoly", "plotting", "display", "peak", "propagation", "linear_recipe", "cost", "io",
     "matfree", "parallel", "_lemma1_forms", "simcache"),
    ("stats",),                                 # seed statistics, t limits, power (numpy/scipy + errors)
    ("errors", "values", "symbols", "_version", "mathml", "defaults"),   # ground floor
)

LAZY_ALLOWED = ("matplotlib", "dask", "distributed")


def _name(module: str) -> str:
    return "" if module == PACKAGE else module[len(PACKAGE) + 1:]


def _layer_of(name: str) -> int | None:
    exact = [i for i, layer in enumerate(LAYERS) if name in layer]
    if exact:
        return exact[0]
    best, best_len = None, -1
    for i, layer in enumerate(LAYERS):
        for entry in layer:
            if entry.endswith(".*") and name.startswith(entry[:-1]) and len(entry) > best_len:
                best, best_len = i, len(entry)
    return best


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(PACKAGE)


def test_every_module_has_a_layer(graph):
    names = sorted(_name(m) for m in graph.modules)
    missing = [n for n in names if _layer_of(n) is None]
    assert not missing, (f"modules without a layer: {missing}; add each to LAYERS in "
                         "tests/test_layering.py and to docs/ARCHITECTURE.md")
    listed = [e for layer in LAYERS for e in layer]
    assert len(listed) == len(set(listed)), "a module is listed in two layers"


def test_imports_point_strictly_down(graph):
    bad = []
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            a, b = _layer_of(_name(importer)), _layer_of(_name(imported))
            if a is not None and b is not None and not a < b:
                details = graph.get_import_details(importer=importer, imported=imported)
                lines = ", ".join(str(d["line_number"]) for d in details)
                bad.append(f"{importer} (layer {a}) imports {imported} (layer {b}) at line {lines}")
    assert not bad, "imports that do not point down:\n" + "\n".join(sorted(bad))


def test_no_import_cycles(graph):
    cycles = [(a, b) for a in graph.modules for b in graph.find_modules_directly_imported_by(a)
              if graph.chain_exists(importer=b, imported=a)]
    assert not cycles, f"import cycles through: {sorted(cycles)}"


def _sources():
    return sorted(ROOT.rglob("*.py"))


def _function_level_imports(tree):
    """Import statements inside a function or class body (top-level try/if blocks are fine)."""
    out = []

    def visit(node, nested):
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                                 ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)) and nested:
                out.append(child)
            visit(child, inner)

    visit(tree, False)
    return out


def _top_name(node) -> str:
    if isinstance(node, ast.ImportFrom):
        return "." if node.level else (node.module or "").split(".")[0]
    return node.names[0].name.split(".")[0]


def test_imports_at_module_top():
    bad = []
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _function_level_imports(tree):
            if _top_name(node) not in LAZY_ALLOWED:
                bad.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert not bad, "imports inside functions (only matplotlib/dask may be lazy):\n" + "\n".join(bad)


def test_backend_selected_only_by_the_cli():
    bad = []
    for path in _sources():
        rel = path.relative_to(ROOT.parent)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "use" and \
                    isinstance(node.value, ast.Name) and node.value.id == "matplotlib" and \
                    rel.parts[1] != "cli":
                bad.append(f"{rel}:{node.lineno}: matplotlib.use")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any("pyplot" in n for n in names):
                    bad.append(f"{rel}:{node.lineno}: imports pyplot")
    assert not bad, "\n".join(bad)


def test_the_checker_detects_violations(tmp_path):
    """The AST rules above can fail: a lazy sympy import and a pyplot import are found."""
    tree = ast.parse("import os\n\ndef f():\n    import sympy\n    import matplotlib\n    return sympy\n")
    assert [_top_name(n) for n in _function_level_imports(tree)] == ["sympy", "matplotlib"]
    assert _layer_of("verification.checks.theory") == LAYERS.index(("verification.checks.*",))
    assert _layer_of("verification.checks.common") == LAYERS.index(("verification.checks.common",))
    assert _layer_of("no_such_module") is None
