"""The size limits of user input and the ceiling on work: one home for the numbers.

Every input the tool reads has a size limit, and every piece of work that the cost model
(:mod:`icl_symbolic.core.cost`) prices above :data:`CEILING_SECONDS` is refused unless the
user gives an explicit budget (``--max-seconds``).  docs/limits.md lists each value, what
happens past it and the option that lifts or shortens it; a test there
(tests/test_fuzz_limits.py) refuses limit + 1 and accepts the limit.

Files are read bounded (:func:`read_text_limited`): at most ``limit + 1`` bytes are read,
so ``verify /dev/zero`` is refused after one megabyte, not after the memory runs out.

>>> CEILING_SECONDS
3600.0
"""

from __future__ import annotations

import os

from icl_symbolic.core.errors import ICLError

# ---------------------------------------------------------------------------
# work: announcement, ceiling, budget
# ---------------------------------------------------------------------------
#: (an estimate above ``cost.ANNOUNCE_SECONDS`` is printed before the work starts)
#: an estimate above this many seconds is refused unless the user gives a budget (``--max-seconds``)
CEILING_SECONDS = 3600.0
#: the ceiling of work that has no progress lines to show (a covariance matrix's eigendecomposition):
#: above it, refused unless the user gives a budget
SILENT_CEILING_SECONDS = 30.0
#: a simulation whose memory estimate is above this many bytes says so before the work starts
ANNOUNCE_BYTES = 1 << 30

# ---------------------------------------------------------------------------
# numbers written as text (options, CSV cells, --value)
# ---------------------------------------------------------------------------
#: characters of one number (surrounding blanks not counted); a float64 has 17 significant digits
MAX_NUMBER_CHARS = 100

# ---------------------------------------------------------------------------
# grids and sweeps
# ---------------------------------------------------------------------------
#: points of one option: a comma list or ``a:b:n``
MAX_GRID = 100_000
#: characters of one list option (MAX_GRID numbers of a few characters each)
MAX_LIST_CHARS = 2_000_000

# ---------------------------------------------------------------------------
# simulations
# ---------------------------------------------------------------------------
#: dimension d of a simulation (simulate, figure, extrapolate)
MAX_D = 100_000
#: seeds of one simulation command (simulate, figure, extrapolate, reproduce per row)
MAX_SEEDS = 10_000
#: Monte-Carlo test prompts per seed
MAX_N_TEST = 10**8

#: dimension d of a named covariance family (powerlaw:p, spiked:..., identity with a d): a spectrum
#: of d numbers, several arrays of it per computation
MAX_SPECTRUM_D = 10_000_000

# ---------------------------------------------------------------------------
# input files
# ---------------------------------------------------------------------------
#: one claim file (verify)
MAX_CLAIM_FILE_BYTES = 1_000_000
#: claims selected by one verify run (the shipped derivations have about 150)
MAX_CLAIMS = 1000
#: an error-model catalogue (diagnose --catalogue)
MAX_CATALOGUE_BYTES = 1_000_000
#: a measured curve (diagnose --curve)
MAX_CURVE_BYTES = 5_000_000
#: a data table (reproduce TABLE.csv)
MAX_TABLE_BYTES = 1 << 20


def read_text_limited(path, limit: int, what: str) -> str:
    """The UTF-8 text of the user's input file ``path``; one-line ICLError if it cannot be read, is
    not UTF-8 or has more than ``limit`` bytes.  At most ``limit + 1`` bytes are read (a device such
    as /dev/zero or a FIFO that never ends costs no more than that).

    >>> read_text_limited("/dev/zero", 10, "the claim file")
    Traceback (most recent call last):
    ...
    icl_symbolic.core.errors.ICLError: the claim file: /dev/zero is larger than 10 bytes (see docs/limits.md)
    """
    try:
        if os.path.isdir(path):
            raise IsADirectoryError(21, "is a directory")
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise ICLError(f"{what}: cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise ICLError(f"{what}: {path} is larger than {limit} bytes (see docs/limits.md)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ICLError(f"{what}: {path} is not UTF-8 text (byte {exc.start})") from None


def check_count(count: int, limit: int, what: str, shorter: str) -> None:
    """One-line ICLError when ``count`` items exceed ``limit`` (``shorter``: how to ask for fewer)."""
    if count > limit:
        raise ICLError(f"{what}: {count} is above the limit {limit} (see docs/limits.md; shorter: {shorter})")


__all__ = [
    "CEILING_SECONDS",
    "SILENT_CEILING_SECONDS",
    "ANNOUNCE_BYTES",
    "MAX_NUMBER_CHARS",
    "MAX_GRID",
    "MAX_LIST_CHARS",
    "MAX_D",
    "MAX_SEEDS",
    "MAX_N_TEST",
    "MAX_SPECTRUM_D",
    "MAX_CLAIM_FILE_BYTES",
    "MAX_CLAIMS",
    "MAX_CATALOGUE_BYTES",
    "MAX_CURVE_BYTES",
    "MAX_TABLE_BYTES",
    "read_text_limited",
    "check_count",
]
