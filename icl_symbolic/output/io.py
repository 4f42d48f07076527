"""Output files written all-or-nothing.

A command that fails or is interrupted must leave no partial output: every
file is written to a temporary name in the target folder and renamed into
place only when complete (``os.replace`` is atomic on POSIX).

Across files: inside :func:`transaction` (the CLI runs every command in one)
the renames are held back until the transaction ends without an error, so a
command with ``--plot a.png --csv b.csv`` writes both files or neither.  The
renames come last, one after another, after every file was written
completely; :func:`check_output_path`, run on every output option before any
computation, makes a failure among them unlikely.

Overwriting (decisions, documented in ``docs/limits.md``):

* an existing regular file is replaced and keeps its permission bits;
* FIFOs, devices, sockets and directories are refused (one line, exit 2);
* a symbolic link to a regular file is followed: its target is replaced and
  the link stays a link; a dangling link is refused.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import stat
import tempfile
import unicodedata
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import numpy as np

from icl_symbolic.core.errors import ICLError

#: the (tmp, final) renames of the open transaction, if any (a context variable: set and reset by it)
_PENDING: ContextVar[list | None] = ContextVar("pending_renames", default=None)


@contextmanager
def transaction(announce=None):
    """Hold back the renames of every :func:`atomic_path` inside until the block succeeds.

    On any exception (KeyboardInterrupt, SIGTERM turned into one by the CLI,
    an error while writing the second file) every temporary file is removed
    and no target is touched.  Nested transactions join the outer one.
    ``announce(path)`` is called once per file after it is in place (the CLI
    names each written file on stderr).
    """
    if _PENDING.get() is not None:
        yield
        return
    pending: list = []
    token = _PENDING.set(pending)
    try:
        yield
        for tmp, final in pending:
            os.replace(tmp, final)
        if announce is not None:
            for _, final in pending:
                announce(final)
    except BaseException:
        for tmp, _ in pending:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        raise
    finally:
        _PENDING.reset(token)


def _target(path: Path, option: str = "output") -> Path:
    """The file that will be replaced: ``path`` itself, or the target of a symlink."""
    if path.is_symlink():
        real = Path(os.path.realpath(path))
        if not real.exists():
            raise ICLError(f"{option}: {str(path)!r} is a dangling symbolic link")
        path = real
    if path.exists():
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise ICLError(f"{option}: {str(path)!r} is a directory")
        if not stat.S_ISREG(mode):
            raise ICLError(
                f"{option}: {str(path)!r} is not a regular file (FIFO, device or socket); refusing to write to it"
            )
    return path


def check_output_path(path, option: str = "output", suffixes=None) -> Path:
    """ICLError unless ``path`` can be written; run before any computation.

    Checks: the suffix (when ``suffixes`` is given), that the path is not a
    directory or a special file, that its folder exists (a missing folder is
    refused: typing errors in paths should not silently create trees) and
    is writable.

    >>> check_output_path("/tmp", "--csv")
    Traceback (most recent call last):
    ...
    icl_symbolic.core.errors.ICLError: --csv: '/tmp' is a directory
    """
    text = str(path)
    check_name(text, option)
    if not text or text.endswith(os.sep):
        raise ICLError(f"{option}: {text!r} is a directory name, not a file")
    p = Path(text)
    if suffixes and p.suffix.lower() not in suffixes:
        raise ICLError(f"{option}: {text!r} must end in {' or '.join(suffixes)}")
    p = _target(p, option)
    parent = p.parent
    if not parent.exists():
        raise ICLError(f"{option}: folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise ICLError(f"{option}: {str(parent)!r} is not a folder")
    try:  # the reliable test (os.access says yes to root on read-only mounts and /proc)
        fd, probe = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ICLError(f"{option}: cannot create files in folder {str(parent)!r} ({exc.strerror})") from None
    if p.exists() and not os.access(p, os.W_OK):
        raise ICLError(f"{option}: {text!r} exists and is not writable")
    return p


#: bidirectional-text controls: they make a name display as another (``a\u202egpj.json``)
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)}


def check_name(text: str, option: str) -> None:
    """ICLError for a file name with control characters: C0/C1 controls and DEL (a newline in a
    name breaks every log), the Unicode line and paragraph separators, and bidirectional controls."""
    bad = [
        c
        for c in text
        if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or unicodedata.category(c) in ("Zl", "Zp") or c in _BIDI
    ]
    if bad:
        raise ICLError(f"{option}: {text!r} contains a control character ({bad[0]!r}); refusing it as a file name")


def check_output_folder(path, option: str = "--out") -> Path:
    """ICLError unless ``path`` is (or can be created as) a folder we can write into; run before any work.

    An existing path must be a directory in which a temporary file can be
    created; a missing one is created later (with its parents) by
    :func:`atomic_path`, so its nearest existing ancestor must be a writable folder.
    """
    text = str(path)
    check_name(text, option)
    if not text:
        raise ICLError(f"{option}: empty folder name")
    p = Path(text)
    probe_dir = p
    while not probe_dir.exists():
        if probe_dir.is_symlink():
            raise ICLError(f"{option}: {text!r} contains a dangling symbolic link")
        if probe_dir.parent == probe_dir:
            break
        probe_dir = probe_dir.parent
    if not probe_dir.is_dir():
        raise ICLError(f"{option}: {str(probe_dir)!r} exists and is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".icl-symbolic.", suffix=".probe", dir=probe_dir)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ICLError(f"{option}: cannot create files in folder {str(probe_dir)!r} ({exc.strerror})") from None
    return p


@contextmanager
def atomic_path(path):
    """Yield a temporary path next to ``path``; rename it to ``path`` on success.

    On any exception (including KeyboardInterrupt) the temporary file is removed
    and ``path`` is untouched.  Inside :func:`transaction` the rename waits for
    the end of the transaction.  An existing file keeps its permission bits.
    """
    path = _target(Path(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o666 & ~_umask()
    os.chmod(tmp, mode)  # mkstemp makes 0600; keep the old file's mode or give the usual one
    try:
        yield Path(tmp)
        pending = _PENDING.get()
        if pending is not None:
            pending.append((tmp, path))
        else:
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def json_safe(obj):
    """``obj`` with every non-finite float replaced by None (strict JSON has no NaN/Infinity).

    Commands give a reason next to such a null; this is the last line of defence.

    >>> json_safe({"e": float("nan"), "x": [1.0, float("inf")]})
    {'e': None, 'x': [1.0, None]}
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.floating):
        return json_safe(float(obj))
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    return obj


def dumps(obj, indent=2) -> str:
    """Strict JSON text (no NaN/Infinity; see :func:`json_safe`)."""
    return json.dumps(json_safe(obj), indent=indent, default=str, allow_nan=False)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def write_csv(path, header, rows) -> None:
    """A CSV file (one header row, then ``rows``; ``\\n`` line ends), written atomically."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    write_text(path, buf.getvalue())


def write_json(path, obj) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    write_text(path, dumps(obj) + "\n")


def save_figure(fig, path) -> None:
    """Save a matplotlib figure atomically (format from the suffix of ``path``)."""
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", dpi=150, bbox_inches="tight")
