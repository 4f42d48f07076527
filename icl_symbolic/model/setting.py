"""One setting of the model: the teacher, the paper's parameters, the simulation conventions.

A :class:`Setting` is what the simulation (:func:`icl_symbolic.simulation.simulator.simulate`),
the ladders in d (:func:`icl_symbolic.studies.extrapolate.run_ladder`), the kernel learner
(:func:`icl_symbolic.kernel_learner.simulation.simulate_kernel`) and the API functions
(``ics.simulate``, ``ics.extrapolate``) take instead of a dozen loose parameters, and what
their results (``SimResult``, ``KernelSimResult``, ``Extrapolation``) store once.  Its fields
carry the paper's names (Sec. 2, p. 2-3): ``alpha = ell/d``, ``kappa = k/d``, ``tau =
n/d^2``, ``rho`` the label-noise variance, ``lam`` the ridge, ``C_train`` and ``C_test`` the
task covariances.  It is frozen; :meth:`Setting.replace` gives a changed copy, and
``Setting.from_json(s.to_json()) == s`` exactly.

>>> s = Setting("sin(g)", d=32, tau=4)
>>> s.replace(kappa=0.5).kappa, s.tasks, s.convention.name
(0.5, 'gaussian', 'default')
>>> Setting.from_json(s.to_json()) == s
True
>>> Setting("sin(g)", alpha=-1)
Traceback (most recent call last):
...
icl_symbolic.core.errors.ICLError: alpha must be a positive finite number, got -1

The conventions (:class:`Convention`): the integer and sampling choices the paper leaves
open (docs/conventions.md), as named options with the presets :data:`CONVENTIONS`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

from icl_symbolic.core import defaults as D
from icl_symbolic.core.errors import ICLError
from icl_symbolic.core.numbers import is_integer_text
from icl_symbolic.engine.expr import Teacher, teacher
from icl_symbolic.model.checks import (  # noqa: F401  (re-exported: one check per parameter)
    ROUNDINGS,
    check_dimension,
    check_n_test,
    check_nonnegative,
    check_ratio,
    check_rounding,
)
from icl_symbolic.model.covariance import Covariance, check_task_law
from icl_symbolic.model.sizes import Sizes, counts

# ----------------------------------------------------------------------------
# conventions: the integer and sampling choices the paper leaves open
# ----------------------------------------------------------------------------
ASSIGNMENTS = ("round-robin", "random")


@dataclass(frozen=True)
class Convention:
    """The simulation choices the paper (Sec. 2, p. 2-3) leaves open, as named options.

    * ``assignment``: ``round-robin`` (prompt mu uses task mu mod k: each task
      floor(n/k) or ceil(n/k) times, exactly n/k times when the rounding makes n a
      multiple of k) or ``random`` (each prompt's task drawn
      uniformly from the k, independently; the stream is the fifth child of the
      seed's SeedSequence, so the other four streams are unchanged);
    * ``train_tasks``, ``test_tasks``: the law of the pretraining and of the test
      tasks, ``gaussian`` (w ~ N(0, C)) or ``sphere`` (rescaled to |w|^2 = tr C);
    * ``rounding``: ``paper``, ``floor-k`` or ``truncate`` (:func:`icl_symbolic.simulation.simulator.sizes`);
    * ``ridge_floor``: the ridge actually used is max(lam, ridge_floor) (a "ridgeless"
      solve with a tiny ridge).

    Presets (:data:`CONVENTIONS`): ``default`` (ours) and ``letey2024`` (the authors'
    simulations; docs/conventions.md says where each choice comes from).
    """

    name: str = "default"
    assignment: str = "round-robin"
    train_tasks: str = "gaussian"
    test_tasks: str = "gaussian"
    rounding: str = "paper"
    ridge_floor: float = 0.0

    def __post_init__(self):
        if self.assignment not in ASSIGNMENTS:
            raise ICLError(f"unknown task assignment {self.assignment!r}; expected one of {', '.join(ASSIGNMENTS)}")
        check_task_law(self.train_tasks)
        check_task_law(self.test_tasks)
        check_rounding(self.rounding)
        rf = self.ridge_floor
        if not (isinstance(rf, (int, float, np.integer, np.floating)) and math.isfinite(rf) and rf >= 0):
            raise ICLError(f"ridge floor must be a finite number >= 0, got {rf!r}")

    def lam(self, lam: float) -> float:
        """The ridge used in training: max(lam, ridge_floor)."""
        return max(float(lam), float(self.ridge_floor))

    @property
    def tasks(self) -> str:
        """One word for the task laws: the law, or ``train/test`` when they differ."""
        return self.train_tasks if self.train_tasks == self.test_tasks else f"{self.train_tasks}/{self.test_tasks}"

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "assignment": self.assignment,
            "train_tasks": self.train_tasks,
            "test_tasks": self.test_tasks,
            "rounding": self.rounding,
            "ridge_floor": float(self.ridge_floor),
        }


#: the named presets (``--convention NAME``)
CONVENTIONS = {
    "default": Convention(),
    # the authors' public simulation code, choice by choice (docs/conventions.md cites each line)
    "letey2024": Convention(
        "letey2024",
        assignment="round-robin",
        train_tasks="sphere",
        test_tasks="gaussian",
        rounding="truncate",
        ridge_floor=1e-6,
    ),
}
CONVENTION_FIELDS = ("assignment", "train_tasks", "test_tasks", "rounding", "ridge_floor")

#: how a spread column of a published table may be made (:class:`PublishedSpread`)
GAP_SPREADS = ("paired", "quadrature")


@dataclass(frozen=True)
class PublishedSpread:
    """How a preset's authors publish the spread of their simulated errors (not a simulation choice:
    how to read their tables, docs/conventions.md).

    * ``ddof``: the per-run standard deviation's delta degrees of freedom (1: the sample
      standard deviation; 0: numpy's ``np.std`` default);
    * ``gap``: the spread of the ICL - IDG gap: ``paired`` (the standard deviation of the
      per-run gaps) or ``quadrature`` (sqrt(std_ICL^2 + std_IDG^2), the two errors' spreads
      combined as if independent).

    >>> L = PUBLISHED_SPREADS["letey2024"]
    >>> L.spread([1.0, 3.0], [0.0, 0.0], "icl"), round(L.spread([1.0, 3.0], [1.0, 2.0], "gap"), 6)
    (1.0, 1.118034)
    >>> L.se(1.0, 5)   # np.std over 5 runs: the sample sd is sqrt(5/4), its mean's SE 1/sqrt(4)
    0.5
    """

    ddof: int = 1
    gap: str = "paired"

    def __post_init__(self):
        if self.ddof not in (0, 1) or self.gap not in GAP_SPREADS:
            raise ICLError(f"a published spread has ddof 0 or 1 and gap one of {', '.join(GAP_SPREADS)}")

    def spread(self, icl, idg=None, error: str = "icl") -> float:
        """The spread these authors print for per-run errors ``icl`` (and ``idg``, same runs) of ``error``."""
        a = np.asarray(icl, dtype=float)
        b = None if idg is None else np.asarray(idg, dtype=float)
        if error == "icl":
            return float(a.std(ddof=self.ddof))
        if b is None or b.shape != a.shape:
            raise ICLError(f"the {error} spread needs the IDG errors of the same runs")
        if error == "idg":
            return float(b.std(ddof=self.ddof))
        if self.gap == "paired":
            return float((a - b).std(ddof=self.ddof))
        return float(math.sqrt(a.std(ddof=self.ddof) ** 2 + b.std(ddof=self.ddof) ** 2))

    def se(self, spread: float, runs: int) -> float:
        """The standard error of the mean over ``runs`` runs from such a spread: the sample standard
        deviation is spread sqrt((runs - ddof)/(runs - 1)), over sqrt(runs).  For a ``quadrature``
        gap spread this is the SE the gap would have if ICL and IDG were independent; on the same
        Gamma they are positively correlated, so it overstates the gap's SE (a conservative reading)."""
        n = int(runs)
        if n < 2:
            raise ICLError(f"a spread over {n} run(s) gives no standard error")
        return float(spread) * math.sqrt((n - self.ddof) / (n - 1)) / math.sqrt(n)


#: the published-spread format of each preset's authors (``letey2024``: the authors' public code,
#: docs/conventions.md: per-run np.std, and the gap's spread in quadrature)
PUBLISHED_SPREADS = {"default": PublishedSpread(), "letey2024": PublishedSpread(ddof=0, gap="quadrature")}


def published_spread(convention=None) -> PublishedSpread:
    """The :class:`PublishedSpread` of a convention's preset (a preset changed by an option, e.g.
    ``letey2024+rounding=paper``, keeps its authors' format; a custom convention: ``default``).

    >>> published_spread(resolve_convention("letey2024", rounding="paper")).ddof, published_spread().gap
    (0, 'paired')
    """
    name = resolve_convention(convention).name.split("+")[0]
    return PUBLISHED_SPREADS.get(name, PUBLISHED_SPREADS["default"])


def resolve_convention(convention=None, tasks: str | None = None, **overrides) -> Convention:
    """A :class:`Convention` from a preset name, a Convention or a dict, plus overrides.

    ``tasks`` (the older single option) sets both task laws; ``overrides`` are
    :data:`CONVENTION_FIELDS` (None = keep).  A preset changed by an override is
    named ``<preset>+<field>=<value>,...`` so that outputs say what was run.

    >>> resolve_convention("letey2024", rounding="paper").name
    'letey2024+rounding=paper'
    >>> resolve_convention(tasks="sphere").tasks
    'sphere'
    """
    if convention is None:
        base = CONVENTIONS["default"]
    elif isinstance(convention, Convention):
        base = convention
    elif isinstance(convention, dict):
        bad = set(convention) - set(CONVENTION_FIELDS) - {"name"}
        if bad:
            raise ICLError(
                f"unknown convention field(s) {', '.join(sorted(bad))}; expected {', '.join(CONVENTION_FIELDS)}"
            )
        base = Convention(**{"name": "custom", **convention})
    elif isinstance(convention, str) and convention in CONVENTIONS:
        base = CONVENTIONS[convention]
    else:
        raise ICLError(f"unknown convention {convention!r}; expected one of {', '.join(CONVENTIONS)}")
    bad = set(overrides) - set(CONVENTION_FIELDS)
    if bad:
        raise ICLError(f"unknown convention option(s) {', '.join(sorted(bad))}")
    ch = {k: v for k, v in overrides.items() if v is not None}
    if tasks is not None:
        check_task_law(tasks)
        ch.setdefault("train_tasks", tasks)
        ch.setdefault("test_tasks", tasks)
    ch = {k: v for k, v in ch.items() if getattr(base, k) != v}
    if not ch:
        return base
    name = (
        base.name
        + "+"
        + ",".join(f"{k}={ch[k]:g}" if k == "ridge_floor" else f"{k}={ch[k]}" for k in CONVENTION_FIELDS if k in ch)
    )
    if (
        base.name == "default"
        and set(ch) <= {"train_tasks", "test_tasks"}
        and len({ch.get("train_tasks", "gaussian"), ch.get("test_tasks", "gaussian")}) == 1
    ):
        name = "default"  # --tasks sphere alone: the older option, recorded by the task laws
    fields = {k: getattr(base, k) for k in CONVENTION_FIELDS}
    fields.update(ch)
    return Convention(name, **fields)


#: the largest Hermite degree K of the kernel learner's features ``hermite:K``
MAX_FEATURE_DEGREE = 3


def check_features(spec) -> str:
    """``identity`` or ``hermite:K`` (K = 1..3, ASCII digits), normalised; one-line ICLError otherwise.

    >>> check_features(" Hermite:2 "), check_features("identity")
    ('hermite:2', 'identity')
    """
    text = str(spec).strip().lower()
    if text == "identity":
        return text
    if text.startswith("hermite:"):
        k = text.split(":", 1)[1]
        if is_integer_text(k) and 1 <= int(k) <= MAX_FEATURE_DEGREE:
            return f"hermite:{int(k)}"
        raise ICLError(f"--features {spec!r}: the degree K of hermite:K must be 1, 2 or 3")
    raise ICLError(f"--features {spec!r}: expected identity or hermite:K (K = 1, 2, 3)")


def _check_covariance(name: str, spec):
    if isinstance(spec, (str, Covariance, np.ndarray)):
        return spec.strip() if isinstance(spec, str) else spec
    raise ICLError(f"{name} must be a covariance name (identity, powerlaw:p, ...), a .npy path or an array")


# ----------------------------------------------------------------------------
# the setting
# ----------------------------------------------------------------------------
def _doc(text: str, default=dataclasses.MISSING, **kw):
    return field(default=default, metadata={"doc": text}, **kw)


@dataclass(frozen=True)
class Setting:
    """One setting of the model (Sec. 2, Eqs. (1)-(7), p. 2-3): the teacher, the paper's
    parameters and the simulation conventions.  Validated on construction (one-line
    :class:`~icl_symbolic.core.errors.ICLError` per field); ``replace(**changes)``,
    ``to_json()``, ``Setting.from_json(obj)`` (exact round trip).  Defaults are those of
    every command (:mod:`icl_symbolic.core.defaults`).

    Fields:
    """

    f: object = _doc(
        'the teacher f(g): an expression of the input language ("sin(g)", docs/input-language.md), '
        "a SymPy expression, a Teacher or a Python callable (only a string has a JSON form)",
        "g",
    )
    rho: float = _doc("rho, the label-noise variance (Sec. 2, p. 2), >= 0", float(D.RHO))
    alpha: float = _doc("alpha = ell/d, the context length per dimension (> 0)", D.ALPHA)
    kappa: float = _doc("kappa = k/d, the task diversity: pretraining tasks per dimension (> 0)", D.KAPPA)
    tau: float = _doc("tau = n/d^2, the pretraining prompts per parameter (> 0); tau = 1 is the peak", D.TAU)
    lam: float = _doc("lam, the ridge of Eq. (6) (regulariser (n/d) lam; 0: the min-norm solution), >= 0", D.LAM)
    d: int | None = _doc(
        "d, the input dimension (an integer >= 2); None where no single d applies (a ladder in d)", D.D
    )
    C_train: object = _doc(
        "C_train, the covariance of the pretraining tasks w ~ N(0, C_train): identity, powerlaw:p, "
        "spiked:f:r, lowrank:r, a .npy path (docs/covariance.md)",
        D.C_TRAIN,
    )
    C_test: object = _doc("C_test, the covariance of the test tasks (None: the same as C_train)", None)
    convention: Convention = _doc(
        "the finite-d choices the paper leaves open (docs/conventions.md): a preset name "
        "(default, letey2024), a dict of the convention fields or a Convention",
        None,
    )
    features: str = _doc(
        "the kernel learner's feature map (docs/kernel.md): identity (plain attention) or hermite:K", "identity"
    )
    n_test: int | None = _doc(
        "fresh test prompts per seed for the Monte-Carlo error (None: the default of the function "
        f"that runs the setting: {D.N_TEST} for a simulation, fewer for the kernel learner)",
        None,
    )

    def __post_init__(self):
        put = object.__setattr__
        for name in FIELDS:  # field order: the first bad field is the one reported
            put(self, name, _CHECKS[name](getattr(self, name)))
        if self.C_test is None:
            put(self, "C_test", self.C_train)

    # -- derived -------------------------------------------------------------
    @functools.cached_property
    def label(self) -> str:
        """The teacher as printed (its text, or the callable's name)."""
        return self.teacher.label

    @property
    def teacher(self) -> Teacher:
        """The teacher as a :class:`~icl_symbolic.engine.expr.Teacher` (a text is parsed once per process:
        :func:`~icl_symbolic.engine.expr.teacher` memoises it)."""
        return teacher(self.f)

    @functools.cached_property
    def sizes(self) -> Sizes:
        """The integer sizes (ell, k, n) at this ``d`` with the convention's rounding
        (:func:`icl_symbolic.model.sizes.sizes`), computed once; ICLError when ``d`` is None."""
        if self.d is None:
            raise ICLError("the sizes of a setting need the dimension d")
        return counts(self.d, self.alpha, self.kappa, self.tau, self.convention.rounding)

    @property
    def tasks(self) -> str:
        """The task laws in one word (:attr:`Convention.tasks`)."""
        return self.convention.tasks

    def replace(self, **changes) -> "Setting":
        """A copy with ``changes`` (validated like a new Setting); a new ``C_train`` moves ``C_test``
        along when the two were equal (C_test = C_train is the default).

        >>> Setting("g", tau=2).replace(tau=4, convention="letey2024").convention.rounding
        'truncate'
        """
        unknown = sorted(set(changes) - set(FIELDS))
        if unknown:
            raise ICLError(f"Setting has no field {', '.join(unknown)}; fields: {', '.join(FIELDS)}")
        if "C_train" in changes and "C_test" not in changes and _same(self.C_test, self.C_train):
            changes["C_test"] = None  # C_test followed C_train: keep following it
        new = object.__new__(Setting)  # only the changed fields are validated: the others were, once
        put = object.__setattr__
        for name in FIELDS:
            put(new, name, _CHECKS[name](changes[name]) if name in changes else getattr(self, name))
        if new.C_test is None:
            put(new, "C_test", new.C_train)
        return new

    # -- JSON ----------------------------------------------------------------
    def to_json(self) -> dict:
        """Every field, the convention as its dict (:meth:`Convention.to_json`); refused (ICLError)
        for a teacher or covariance that is not a string (a callable has no JSON form)."""
        for name in ("f", "C_train", "C_test"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise ICLError(
                    f"Setting.to_json: {name} must be a string to be written as JSON, got {type(value).__name__}"
                )
        return {
            "f": self.f,
            "rho": self.rho,
            "alpha": self.alpha,
            "kappa": self.kappa,
            "tau": self.tau,
            "lam": self.lam,
            "d": self.d,
            "C_train": self.C_train,
            "C_test": self.C_test,
            "convention": self.convention.to_json(),
            "features": self.features,
            "n_test": self.n_test,
        }

    @classmethod
    def from_json(cls, obj: dict) -> "Setting":
        """The Setting of :meth:`to_json` (exactly: ``Setting.from_json(s.to_json()) == s``)."""
        if not isinstance(obj, dict):
            raise ICLError(f"a Setting is read from a JSON object, got {type(obj).__name__}")
        unknown = sorted(set(obj) - set(FIELDS))
        if unknown:
            raise ICLError(f"Setting has no field {', '.join(unknown)}; fields: {', '.join(FIELDS)}")
        kw = dict(obj)
        conv = kw.get("convention")
        if isinstance(conv, dict):
            bad = sorted(set(conv) - set(CONVENTION_FIELDS) - {"name"})
            if bad:
                raise ICLError(f"unknown convention field(s) {', '.join(bad)}")
            kw["convention"] = Convention(**conv)
        return cls(**kw)


#: the field names, in order
FIELDS = tuple(f.name for f in dataclasses.fields(Setting))


def _optional(check):
    return lambda v: None if v is None else check(v)


def _same(a, b) -> bool:
    """``a == b`` for two field values (an array compares as itself only; values that cannot be
    compared are different)."""
    if np.ndim(a) or np.ndim(b) or isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return a is b
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _check_teacher(f):
    teacher(f)  # parses (one-line ParseError) and checks the teacher; memoised for a text
    return f


#: field -> its one check (returns the normalised value); C_test None is resolved to C_train after
_CHECKS = {
    "f": _check_teacher,
    "rho": functools.partial(check_nonnegative, "rho"),
    "alpha": functools.partial(check_ratio, "alpha"),
    "kappa": functools.partial(check_ratio, "kappa"),
    "tau": functools.partial(check_ratio, "tau"),
    "lam": functools.partial(check_nonnegative, "lam"),
    "d": _optional(check_dimension),
    "C_train": functools.partial(_check_covariance, "C_train"),
    "C_test": _optional(functools.partial(_check_covariance, "C_test")),
    "convention": resolve_convention,
    "features": check_features,
    "n_test": _optional(check_n_test),
}
#: field name -> its documentation
FIELD_DOCS = {f.name: f.metadata["doc"] for f in dataclasses.fields(Setting)}
Setting.__doc__ += "".join(f"\n    * ``{name}``: {doc}" for name, doc in FIELD_DOCS.items()) + "\n"


#: the paper's parameters of a setting besides the dimension, in the order of every JSON output
PARAMETERS = ("alpha", "kappa", "tau", "rho", "lam")


def _setting_alias(name: str, attr: str, doc: str) -> property:
    """A read-only attribute that reads ``self.view().<attr>``; read from outside the package it warns
    (DeprecationWarning): the result's fields are read from its ``setting``."""

    def get(self):
        if not sys._getframe(1).f_globals.get("__name__", "").startswith("icl_symbolic"):
            warnings.warn(
                f"result.{name} is deprecated and will be removed in the next minor release; "
                f"read result.setting.{attr}",
                DeprecationWarning,
                stacklevel=2,
            )
        return getattr(self.view(), attr)

    return property(get, doc=f"Deprecated (read ``setting.{attr}``): {doc}")


#: the attributes of :class:`SettingView`: (name, the Setting attribute it reads, what it is)
_ALIASES = (
    ("teacher", "label", "the teacher's label"),
    ("d", "d", "the input dimension"),
    ("alpha", "alpha", "alpha = ell/d (the kernel learner: ell/D)"),
    ("kappa", "kappa", "kappa = k/d (the kernel learner: k/D)"),
    ("tau", "tau", "tau = n/d^2 (the kernel learner: n/D^2)"),
    ("rho", "rho", "the label-noise variance"),
    ("lam", "lam", "the ridge"),
    ("C_train", "C_train", "the pretraining-task covariance"),
    ("C_test", "C_test", "the test-task covariance"),
    ("features", "features", "the kernel learner's feature map"),
    ("n_test", "n_test", "Monte-Carlo test prompts per seed"),
    ("tasks", "tasks", "the task laws in one word"),
    ("convention", "convention", "the Convention"),
)


class SettingView:
    """The fields of the :class:`Setting` a result stores once (as ``setting``), read as its own
    attributes (``res.tau``, ``res.teacher`` the teacher's label): the names results had before
    they stored a Setting.  Deprecated for one release: read from outside the package, each
    attribute warns (DeprecationWarning) and names its replacement ``res.setting.<name>``."""

    def view(self):
        """What the attributes read: the stored ``setting``."""
        return self.setting

    def setting_items(self, *names) -> dict:
        """``{name: self.<name>}`` for the attributes ``names`` (default :data:`PARAMETERS`), in that order:
        the setting's keys of a result's JSON."""
        return {k: getattr(self, k) for k in names or PARAMETERS}


for _name, _attr, _doc in _ALIASES:
    setattr(SettingView, _name, _setting_alias(_name, _attr, _doc))
del _name, _attr, _doc


def setting_fields(arguments: dict) -> dict:
    """The Setting fields among a function's ``arguments`` (``locals()`` at its top), without ``f``: the
    loose keywords that :func:`as_setting` turns into a Setting."""
    return {k: v for k, v in arguments.items() if k in FIELDS and k != "f"}


def as_setting(f, defaults=None, **loose) -> Setting:
    """The one converter to a :class:`Setting`: ``f`` itself when it is a Setting (then no value of
    ``loose`` may be given: change the Setting with ``.replace`` instead), else ``Setting(f, **loose)``.
    A value counts as not given when it is None or equal to its entry in ``defaults`` (a caller's
    own keyword defaults, such as the API's); the values not given stay at the Setting's defaults.
    The simulation functions' loose keywords and the API's sweeps
    (:func:`icl_symbolic.api._args.settings_of`, one Setting per grid point) all come through here.

    >>> s = Setting("g", d=8)
    >>> as_setting(s, tau=None) is s, as_setting(s, {"tau": 2.0}, tau=2.0) is s
    (True, True)
    >>> as_setting("g", d=8, tau=None) == s
    True
    """
    defaults = defaults or {}
    given = {k: v for k, v in loose.items() if v is not None and not (k in defaults and _same(v, defaults[k]))}
    if isinstance(f, Setting):
        if given:
            raise ICLError(
                f"a Setting was given: change it with setting.replace({', '.join(k + '=...' for k in sorted(given))}) "
                "instead of passing those as well"
            )
        return f
    return Setting(f, **{k: v for k, v in loose.items() if v is not None})


__all__ = [
    "Setting",
    "FIELDS",
    "FIELD_DOCS",
    "as_setting",
    "setting_fields",
    "SettingView",
    "PARAMETERS",
    "Convention",
    "CONVENTIONS",
    "CONVENTION_FIELDS",
    "ASSIGNMENTS",
    "ROUNDINGS",
    "GAP_SPREADS",
    "PublishedSpread",
    "PUBLISHED_SPREADS",
    "published_spread",
    "resolve_convention",
    "check_rounding",
    "check_ratio",
    "check_nonnegative",
    "check_dimension",
    "check_n_test",
    "check_features",
    "MAX_FEATURE_DEGREE",
]
