"""Verification of the paper's claims, written as data in claim files.

==============  ================================================================
``claimfile``   loading and validating claim files (TOML)
``registry``    what a check kind is; parsing of its parameters
``checks/``     the check kinds, one module per paper unit, in one table
``judge``       tolerances and the comparison of computed with claimed values
``evidence``    what kind of evidence a claim is, tallied per paper result
``runner``      running claims: verdicts, summary, one-line formats
``report``      Markdown / HTML reports of a run
==============  ================================================================

``report`` formats what ``runner`` returns; ``runner`` uses ``claimfile`` and
``checks``; ``checks`` use ``registry``, ``judge`` and :mod:`icl_symbolic.diagnosis.scale`.  The
folder rules are import-linter contracts in ``pyproject.toml`` (docs/ARCHITECTURE.md).
"""
