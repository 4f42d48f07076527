"""Which of the package's own source files a module runs, read from its import statements.

:func:`import_closure` follows the ``import`` statements of the package's files (parsed with
:mod:`ast`, never executed) from a few root modules and returns every package module that
importing the roots can execute: each module imported at module level or inside a function,
the ``__init__`` of every package on the way, and a submodule named in ``from pkg import
name``.  Imports under ``if TYPE_CHECKING:`` never run and are skipped.  Only literal
import statements are followed (the package's lazy ``importlib`` loaders are not: they load
the public API or claim checks, never a computation of a lower layer).

:func:`source_digest` hashes those files' bytes; the simulation cache keys its stored seeds
with it (``icl_symbolic.simulation.cache``), so that an edit of any module a cached number
depends on, and only of those, makes the cache miss.

>>> from pathlib import Path
>>> root = Path(__file__).resolve().parent.parent
>>> mods = import_closure(root, "icl_symbolic", ["icl_symbolic.model.moments"])
>>> "icl_symbolic.model._lemma1_forms" in mods, "icl_symbolic.theory.asymptotic" in mods
(True, False)
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path
from typing import Iterable

from icl_symbolic.core.caches import memoize


def _module_file(root: Path, package: str, name: str) -> Path | None:
    """The file of module ``name`` (``package.a.b``) under ``root`` (the package's folder), or None."""
    parts = name.split(".")
    if parts[0] != package:
        return None
    base = root.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST):
    """Every Import / ImportFrom node of ``tree`` except those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


@memoize(maxsize=512)
def _imports(source: bytes) -> tuple:
    """The import statements of a source text as (level, module, names): ``import a.b`` is
    (None, None, ("a.b",)), ``from ..a import b, c`` is (2, "a", ("b", "c")).  Memoized on
    the text, so an unchanged file is parsed once per process."""
    out = []
    for node in _import_nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.append((None, None, tuple(a.name for a in node.names)))
        else:
            out.append((node.level, node.module, tuple(a.name for a in node.names)))
    return tuple(out)


def _imported_names(statement: tuple, current: str, is_package: bool) -> list[str]:
    """Dotted module names an import statement may load (absolute; relative ones resolved from ``current``)."""
    level, module, names = statement
    if level is None:
        return list(names)
    base = module or ""
    if level:
        anchor = current.split(".")
        if not is_package:
            anchor = anchor[:-1]
        anchor = anchor[: len(anchor) - (level - 1)]
        base = ".".join(anchor + ([base] if base else []))
    return [base] + [f"{base}.{n}" for n in names if n != "*"]


def _with_parents(name: str) -> list[str]:
    """``a.b.c`` -> ``a``, ``a.b``, ``a.b.c`` (importing a module runs its packages' ``__init__``)."""
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def import_closure(root: Path, package: str, roots: Iterable[str]) -> tuple[str, ...]:
    """Sorted names of the modules of ``package`` (folder ``root``) that importing ``roots`` can run."""
    root = Path(root)
    seen: set[str] = set()
    todo = [p for r in roots for p in _with_parents(r)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(root, package, name)
        if path is None:
            continue  # an attribute imported with ``from module import name``, or another package
        seen.add(name)
        for statement in _imports(path.read_bytes()):
            for target in _imported_names(statement, name, path.name == "__init__.py"):
                if target.split(".")[0] == package:
                    todo.extend(p for p in _with_parents(target) if p not in seen)
    return tuple(sorted(seen))


def source_digest(root: Path, package: str, roots: Iterable[str], salt: str = "") -> tuple[str, tuple[str, ...]]:
    """(SHA-256 hex of ``salt`` and the bytes of every module in the closure, the module names)."""
    root = Path(root)
    mods = import_closure(root, package, roots)
    h = hashlib.sha256(salt.encode())
    for name in mods:
        h.update(b"\0" + name.encode() + b"\0")
        h.update(_module_file(root, package, name).read_bytes())
    return h.hexdigest(), mods


__all__ = ["import_closure", "source_digest"]
