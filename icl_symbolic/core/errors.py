"""User-facing errors.

Every error a user can provoke with bad input is an :class:`ICLError` (or a
subclass).  The CLI prints ``icl-symbolic: error: <message>`` on one line and
exits with status 2; it never shows a traceback for these.

:class:`ICLError` is a :class:`ValueError`: a notebook's ``except ValueError``
catches it, as it catches NumPy's and SciPy's refusals of bad arguments.  Code
that catches ``ValueError`` around a call that may raise an :class:`ICLError`
re-raises the latter first (``except ICLError: raise``) so that its message
reaches the user unchanged.
"""


class ICLError(ValueError):
    """Bad input or an impossible request, explained in one line."""


class ParseError(ICLError):
    """A user expression that is not in the whitelisted input language.

    ``position`` is the 0-based character offset of the offending token
    (or ``None`` when the problem is global, such as the input length).
    """

    def __init__(self, message, text=None, position=None):
        self.text = text
        self.position = position
        if text is not None and position is not None:
            message = f"{message} (at column {position + 1}: {text[position : position + 20]!r})"
        super().__init__(message)


class ValidityError(ICLError):
    """A mathematically invalid request (f not in L^2(N(0,1)), divergent integral, ...)."""


class ClaimFileError(ICLError):
    """A claim file that cannot be used; the message names file, claim and problem."""
