"""The package's architecture, enforced.

The folder rules are import-linter contracts in ``pyproject.toml``
(``[tool.importlinter]``, the one place they are stated): the folders form
layers, theory and simulation never import each other, the engine never
imports the verification machinery, nothing below the command line imports it.
This file runs them and adds what import-linter does not check:

* no module imports another module's underscore-private name (a private
  *module*, such as ``cli._args``, may be imported inside its own package);
* no import cycles, inside a folder too;
* imports sit at the top of each module (only matplotlib and dask may load lazily);
* no ``matplotlib.use`` outside ``icl_symbolic/cli/`` and no ``pyplot`` anywhere.

Each rule is shown to fail: the violation is planted in a temporary copy of the
package and the checker must report it.

Not seen by the import graph: ``importlib.import_module`` calls.  The package has
two: the lazy API re-export in ``icl_symbolic/__init__.py`` and
:func:`icl_symbolic.verification.runner._needs_available`, which imports the modules a
check kind names in ``needs`` (modules its check module already imports at the top).
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

import icl_symbolic
from icl_symbolic.core import caches

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PACKAGE = "icl_symbolic"
REPO = Path(__file__).resolve().parent.parent
ROOT = REPO / PACKAGE
LAZY_ALLOWED = ("matplotlib", "dask", "distributed")


def _lint(cwd: Path, env_path: Path | None = None) -> subprocess.CompletedProcess:
    """Run import-linter on the package found first on the path (a planted copy when given)."""
    env = dict(os.environ)
    if env_path is not None:
        env["PYTHONPATH"] = str(env_path)
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private_imports(root: Path) -> list[str]:
    """``from X import _name`` across modules, and private modules imported from outside their package."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        me = _module_name(path, root)
        here = me if path.name == "__init__.py" else me.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not (mod == PACKAGE or mod.startswith(PACKAGE + ".")):
                continue
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    target = f"{mod}.{a.name}"
                    is_module = (root.parent / (target.replace(".", "/") + ".py")).exists()
                    if not (is_module and here.startswith(mod)):
                        bad.append(f"{path.relative_to(root.parent)}:{node.lineno}: {a.name} from {mod}")
            parts = mod.split(".")
            for i, part in enumerate(parts):
                if part.startswith("_") and not part.startswith("__"):
                    owner = ".".join(parts[:i])
                    if not (here == owner or here.startswith(owner + ".")):
                        bad.append(f"{path.relative_to(root.parent)}:{node.lineno}: private module {mod}")
    return bad


def _function_level_imports(tree):
    """Import statements inside a function or class body (top-level try/if blocks are fine)."""
    out = []

    def visit(node, nested):
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)) and nested:
                out.append(child)
            visit(child, inner)

    visit(tree, False)
    return out


def _top_name(node) -> str:
    if isinstance(node, ast.ImportFrom):
        return "." if node.level else (node.module or "").split(".")[0]
    return node.names[0].name.split(".")[0]


def lazy_imports(root: Path) -> list[str]:
    bad = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _function_level_imports(tree):
            if _top_name(node) not in LAZY_ALLOWED:
                bad.append(f"{path.relative_to(root.parent)}:{node.lineno}: {ast.unparse(node)}")
    return bad


def _planted_copy(tmp_path: Path, rel: str, line: str) -> Path:
    """A copy of the package and its contracts with ``line`` added after the imports of ``rel``."""
    shutil.copytree(ROOT, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / PACKAGE / rel
    src = target.read_text(encoding="utf-8")
    marker = "\nfrom __future__ import annotations\n"
    assert marker in src, rel
    target.write_text(src.replace(marker, marker + line + "\n", 1), encoding="utf-8")
    return tmp_path


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(PACKAGE)


def test_contracts_kept():
    r = _lint(REPO)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "broken" in r.stdout and " 0 broken" in r.stdout


@pytest.mark.heavy
@pytest.mark.parametrize(
    "rel, line, contract",
    [
        # simulation leaning on the theory it is compared with
        ("simulation/simulator.py", "from icl_symbolic.theory import asymptotic as _planted", "Theory and simulation"),
        # an upward import across folders: the engine reaching into verification
        ("engine/gauss.py", "from icl_symbolic.verification import judge as _planted", "layers"),
        # a lower folder importing the command line
        ("model/moments.py", "from icl_symbolic.cli import _args as _planted", "command line"),
    ],
)
def test_contracts_catch_a_planted_violation(tmp_path, rel, line, contract):
    copy = _planted_copy(tmp_path, rel, line)
    r = _lint(copy, env_path=copy)
    assert r.returncode != 0, f"planted {line!r} in {rel} was not caught:\n{r.stdout[-2000:]}"
    assert "BROKEN" in r.stdout and contract.split()[0] in r.stdout, r.stdout[-2000:]
    # the copy really was the one analysed (not the installed package)
    assert str(copy) not in r.stderr


def test_no_private_name_imports():
    assert private_imports(ROOT) == []


def test_private_name_rule_catches_a_planted_violation(tmp_path):
    copy = _planted_copy(tmp_path, "theory/peak.py", "from icl_symbolic.core.stats import _planted_private")
    found = private_imports(copy / PACKAGE)
    assert (
        len(found) == 1
        and found[0].startswith("icl_symbolic/theory/peak.py:")
        and found[0].endswith("_planted_private from icl_symbolic.core.stats")
    ), found
    copy2 = _planted_copy(tmp_path / "b", "theory/peak.py", "from icl_symbolic.cli import _args")
    assert [b.rpartition(": ")[2] for b in private_imports(copy2 / PACKAGE)] == ["_args from icl_symbolic.cli"]


def test_no_import_cycles(graph):
    cycles = [
        (a, b)
        for a in graph.modules
        for b in graph.find_modules_directly_imported_by(a)
        if graph.chain_exists(importer=b, imported=a)
    ]
    assert not cycles, f"import cycles through: {sorted(cycles)}"


def test_imports_at_module_top():
    bad = lazy_imports(ROOT)
    assert not bad, "imports inside functions (only matplotlib/dask may be lazy):\n" + "\n".join(bad)


def test_backend_selected_only_by_the_cli():
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "use"
                and isinstance(node.value, ast.Name)
                and node.value.id == "matplotlib"
                and rel.parts[1] != "cli"
            ):
                bad.append(f"{rel}:{node.lineno}: matplotlib.use")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any("pyplot" in n for n in names):
                    bad.append(f"{rel}:{node.lineno}: imports pyplot")
    assert not bad, "\n".join(bad)


def test_the_ast_checkers_detect_violations():
    """The lazy-import rule can fail: a lazy sympy import is found, a lazy matplotlib one is allowed."""
    tree = ast.parse("import os\n\ndef f():\n    import sympy\n    import matplotlib\n    return sympy\n")
    assert [_top_name(n) for n in _function_level_imports(tree)] == ["sympy", "matplotlib"]


def test_every_folder_is_in_the_layers():
    """A new folder must be placed in the layered contract (or it escapes every rule)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["id"] == "layers")["layers"]
    placed = {name.strip() for layer in layers for name in layer.split("|")}
    folders = {f"{PACKAGE}.{p.parent.name}" for p in ROOT.glob("*/__init__.py")}
    data_only = {f"{PACKAGE}.data"}  # package data (TOML tables), no code
    assert folders - data_only == placed, (folders - data_only) ^ placed
    stray = sorted(p.name for p in ROOT.glob("*.py") if p.name not in ("__init__.py", "__main__.py", "_version.py"))
    assert not stray, f"modules outside the folders: {stray}"


def unregistered_caches(modules) -> list[str]:
    """Module-level caches not made by :mod:`icl_symbolic.core.caches`: functions with a
    ``cache_clear`` defined in the package, and dicts/lists named like ``_..._CACHE``."""
    known_store = {id(c.store) for c in caches.registered() if c.store is not None}
    bad = []
    for mod in modules:
        for attr, val in vars(mod).items():
            clear = getattr(val, "cache_clear", None)
            if (
                callable(clear)
                and getattr(val, "__module__", "") == mod.__name__
                and not any(
                    c.owner == f"{mod.__name__}.{getattr(val, '__qualname__', attr)}" for c in caches.registered()
                )
            ):
                bad.append(f"{mod.__name__}.{attr}")
            elif CACHE_NAME.match(attr) and isinstance(val, (dict, list)) and id(val) not in known_store:
                bad.append(f"{mod.__name__}.{attr}")
    return bad


CACHE_NAME = re.compile(r"^_[A-Z0-9_]*(CACHE|FUNCS|MEMO)[A-Z0-9_]*$")


def _all_modules():
    mods = []
    for info in pkgutil.walk_packages(icl_symbolic.__path__, "icl_symbolic."):
        if not info.name.endswith("__main__"):
            mods.append(importlib.import_module(info.name))
    return mods


def test_every_cache_has_an_owner_and_a_public_clear():
    assert unregistered_caches(_all_modules()) == []
    n = len(caches.registered())
    assert n >= 20 and caches.clear() == n
    assert {c.kind for c in caches.registered("simulation")} == {"simulation"}


def test_the_cache_rule_catches_a_hand_made_cache():
    import functools
    import types

    fake = types.ModuleType("icl_symbolic.planted")

    @functools.lru_cache(maxsize=2)
    def f(x):
        return x

    f.__module__ = fake.__name__
    fake.f = f
    fake._PLANTED_CACHE = {}
    assert sorted(unregistered_caches([fake])) == ["icl_symbolic.planted._PLANTED_CACHE", "icl_symbolic.planted.f"]


# ---------------------------------------------------------------------------
# one front end: a command module imports the API and the cli helpers only
# ---------------------------------------------------------------------------
#: command modules not yet on the API alone, with the library modules they still import; this list
#: may only shrink (a new library import in any command fails the test below)
CLI_NOT_YET_ON_API: dict = {}


def _library_imports(path) -> set:
    """The icl_symbolic modules a file imports that are neither the API nor the command line."""
    import ast

    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = (
            [node.module]
            if isinstance(node, ast.ImportFrom) and node.module
            else [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        out |= {
            n
            for n in names
            if n.startswith("icl_symbolic")
            and not n.startswith(("icl_symbolic.api", "icl_symbolic.cli", "icl_symbolic._version"))
        }
    return out


def test_command_modules_import_only_the_api_and_cli_helpers(tmp_path):
    from icl_symbolic.cli import COMMANDS

    cli = Path(__file__).resolve().parents[1] / "icl_symbolic" / "cli"
    for module in COMMANDS.values():
        found = _library_imports(cli / f"{module}.py")
        allowed = CLI_NOT_YET_ON_API.get(module, set())
        assert found <= allowed, f"cli/{module}.py imports {sorted(found - allowed)} (use icl_symbolic.api)"
        assert module not in CLI_NOT_YET_ON_API or found == allowed, f"cli/{module}.py: shrink the allowlist"
    on_api = [m for m in COMMANDS.values() if m not in CLI_NOT_YET_ON_API]
    # every command is on the API (simulate, extrapolate and reproduce were the last: conventions, the
    # IDG error and the kernel-learner ladder now go through their API functions)
    assert set(on_api) == set(COMMANDS.values()) and {"simulate", "extrapolate", "reproduce"} <= set(on_api)
    planted = tmp_path / "theory.py"  # the check fails on a planted library import
    planted.write_text((cli / "theory.py").read_text() + "\nfrom icl_symbolic.theory import asymptotic\n")
    assert _library_imports(planted) == {"icl_symbolic.theory"}
