"""The shared verdict's words for the commands that judge (reproduce, extrapolate, simulate --order 1,
diagnose --curve): the ``--mde`` option's default, help and parser, the exit-code text and the
percent format, from :mod:`icl_symbolic.core.verdict`.

Kept apart from :mod:`icl_symbolic.cli._args` because the verdict machinery loads scipy.stats
(about 0.5 s of start-up), which a command that judges nothing (``coeffs``, ``theory``) should not pay.
"""

from __future__ import annotations

from icl_symbolic.core.verdict import DEFAULT_MDE_PCT, exit_text, mde_help, parse_mde, pct

__all__ = ["DEFAULT_MDE_PCT", "exit_text", "mde_help", "parse_mde", "pct"]
