"""One convention for every command (docs/cli.md): output options, JSON shape, defaults, help,
exit statuses, old spellings, diverging points, streaming verdicts."""

import argparse
import json
from pathlib import Path

import pytest

from icl_symbolic.cli import COMMANDS, build_parser, main
from icl_symbolic.core import defaults
from icl_symbolic.verification import runner
from icl_symbolic.verification.claimfile import load_claims, select


def _subparsers():
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def test_every_option_has_help_every_help_lists_exit_statuses_and_states_defaults():
    subs = _subparsers()
    assert set(subs) == set(COMMANDS)
    for name, p in subs.items():
        text = p.format_help()
        assert "exit status: 0" in text and "2 bad input" in text, name
        for a in p._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            assert a.help, f"{name} {a.option_strings or a.dest} has no help text"
            if a.option_strings and a.default not in (None, False, argparse.SUPPRESS):
                line = p._get_formatter()._format_action(a)
                assert str(a.default) in " ".join(line.split()), f"{name} {a.option_strings}: default not stated"


#: options whose default differs between commands, and the words of that command's --help that say why
DIFFERENT_DEFAULTS = {
    ("kernel", "--alpha"): "LEARNER'S",
    ("kernel", "--kappa"): "LEARNER'S",
    ("kernel", "--tau"): "LEARNER'S",
    ("kernel", "--features"): "hermite:2",
    ("theory", "--tau"): "(default: 0.1:4:80)",  # theory draws a curve, the others run one point
    ("extrapolate", "--d"): "the ladder of dimensions",
    ("moments", "--seed"): "seed of the Monte Carlo",
}


def test_every_command_has_the_whole_convention():
    """--json, --json-out, --csv, --quiet everywhere; --plot, or a sentence in --help saying why not;
    0/2/130 in every --help; a teacher positional is always EXPR."""
    for name, p in _subparsers().items():
        opts = {o for a in p._actions for o in a.option_strings}
        assert {"--json", "--json-out", "--csv", "--quiet"} <= opts, name
        text = p.format_help()
        assert ("--plot" in opts) != ("no --plot: " in text), name
        assert "exit status: 0" in text and "2 bad input" in text and "130 interrupted" in text, name
        for a in p._actions:
            if not a.option_strings and a.dest in ("f", "expr"):
                assert a.metavar == "EXPR", name


def test_the_same_defaults_across_commands():
    """One default per option across commands; where a command differs its --help says why."""
    subs = _subparsers()
    seen = {}
    for name, p in subs.items():
        for a in p._actions:
            for o in a.option_strings:
                if a.default not in (None, False, argparse.SUPPRESS) and o != "--help":
                    seen.setdefault(o, {})[name] = str(a.default)
    assert seen["--rho"] and set(seen["--rho"].values()) == {defaults.RHO}
    for opt, by_command in seen.items():
        usual = {v for c, v in by_command.items() if (c, opt) not in DIFFERENT_DEFAULTS}
        numbers = {float(v) if v.replace(".", "", 1).isdigit() else v for v in usual}
        assert len(numbers) <= 1, (opt, by_command)
    for (name, opt), words in DIFFERENT_DEFAULTS.items():
        assert words in " ".join(subs[name].format_help().split()), (name, opt)
    for opt, value in (
        ("--alpha", defaults.ALPHA),
        ("--kappa", defaults.KAPPA),
        ("--lam", defaults.LAM),
        ("--seeds", defaults.SEEDS),
        ("--digits", defaults.DIGITS),
        ("--d", defaults.D),
        ("--tau", defaults.TAU),
    ):
        for name, v in seen[opt].items():
            if (name, opt) not in DIFFERENT_DEFAULTS:
                assert float(v) == value, (name, opt)
    for name in ("simulate", "extrapolate"):
        assert f"default {defaults.N_TEST};" in " ".join(subs[name].format_help().split()), name


def test_help_examples_survive_copy_paste():
    """Every example is one unwrapped line that the command's own parser accepts as it stands."""
    import shlex

    parser = build_parser()
    count = 0
    for name, p in _subparsers().items():
        lines = p.format_help().splitlines()
        examples = lines[lines.index("examples:") + 1 :]
        for line, nxt in zip(examples, examples[1:] + [""]):
            if not line.startswith("  icl-symbolic "):
                continue
            assert not nxt.startswith("    --") and not nxt.startswith("      "), (name, line)  # not wrapped
            argv = shlex.split(line)[1:]
            assert argv[0] == name, line
            args, extra = parser.parse_known_args(argv)
            assert extra == [] and args.command == name, line
            count += 1
        assert count, name
    assert count >= 20


@pytest.mark.parametrize(
    "argv,message",
    [
        (["theory", "g", "--rhoo", "0.2"], "theory: unrecognized arguments: --rhoo 0.2 (did you mean --rho?)"),
        (["simulate", "g", "--n_test", "10"], "(did you mean --n-test?)"),
        (["verify", "--reprot", "r.html"], "(did you mean --report?)"),
        (["theroy", "g"], "unknown command 'theroy' (did you mean theory?)"),
    ],
)
def test_a_misspelt_option_or_command_gets_a_suggestion(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


RHO_ARGV = {
    "coeffs": ["coeffs", "g"],
    "moments": ["moments", "g", "--d", "4"],
    "theory": ["theory", "g"],
    "kernel": ["kernel", "g"],
    "simulate": ["simulate", "g"],
    "extrapolate": ["extrapolate", "g"],
    "diagnose": ["diagnose", "g", "--value", "1.0"],
}


@pytest.mark.parametrize("command", sorted(RHO_ARGV))
def test_the_same_mistake_has_the_same_words_in_every_command(command, capsys, tmp_path, monkeypatch):
    """One check per parameter (cli/_args.check_parameter): a negative rho, alpha, a zero tau."""
    monkeypatch.chdir(tmp_path)
    assert main(RHO_ARGV[command] + ["--rho", "-0.1", "--json-out", "o.json"]) == 2
    assert capsys.readouterr().err == "icl-symbolic: error: --rho: must be >= 0 (the label-noise variance), got -0.1\n"
    opts = {o for a in _subparsers()[command]._actions for o in a.option_strings}
    for opt, value, words in (
        ("--alpha", "-1", "--alpha: must be > 0 (the context ratio ell/d), got -1"),
        ("--tau", "0", "--tau: must be > 0 (the pretraining ratio n/d^2), got 0"),
        ("--lam", "-2", "--lam: must be >= 0 (the ridge), got -2"),
    ):
        if opt in opts:
            assert main(RHO_ARGV[command] + [opt, value]) == 2, opt
            assert capsys.readouterr().err == f"icl-symbolic: error: {words}\n", (command, opt)
    assert list(tmp_path.iterdir()) == []


CHEAP = {
    "coeffs": ["coeffs", "g**3", "--M", "3"],
    "dual": ["dual", "relu(g)", "--corr", "0,1/2", "--digits", "12"],
    "moments": ["moments", "g", "--d", "4", "--ell", "8"],
    "appendix-a": ["appendix-a", "identity", "--d", "10"],
    "theory": ["theory", "sin(g)", "--tau", "0.5,2"],
    "simulate": ["simulate", "g", "--d", "4", "--seeds", "2", "--n-test", "200", "--quiet"],
    "verify": ["verify", "--quiet", "--only", "fig1.offset_exactly_one"],
    "diagnose": ["diagnose", "sin(g)", "--value", "1.447"],
    "kernel": ["kernel", "g + (g^2-1)/sqrt(2)", "--features", "hermite:1", "--d", "4", "--tau", "4"],
    "extrapolate": [
        "extrapolate",
        "g",
        "--d",
        "4,6",
        "--seeds",
        "2",
        "--n-test",
        "100",
        "--quiet",
        "--false-alarm",
        "1e-12",
    ],
    "figure": ["figure", "a1zero", "--quick", "--d", "4", "--seeds", "1", "--quiet"],
    "reproduce": [
        "reproduce",
        str(Path(__file__).resolve().parent.parent / "docs" / "reproduce-example.csv"),
        "--f",
        "(g^2-1)/sqrt(2)",
        "--alpha",
        "2",
        "--tau",
        "8",
        "--rho",
        "0.1",
        "--convention",
        "letey2024",
        "--columns",
        "d=d,kappa=kappa,mean=icl_mean,spread=icl_std,runs=runs",
        "--seeds-per-row",
        "10",
        "--quiet",
    ],
}


#: the cheap runs whose verdict is "inconclusive" (exit 3): 2 seeds on d = 4, 6 cannot resolve 5 %
INCONCLUSIVE = {"extrapolate": 3}


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, marks=pytest.mark.sim) if c in ("simulate", "figure", "reproduce") else c for c in sorted(CHEAP)],
)
def test_json_is_one_object_with_points_and_json_out_writes_the_same(command, tmp_path, capsys, monkeypatch):
    assert set(CHEAP) == set(COMMANDS)  # every command is covered
    monkeypatch.chdir(tmp_path)  # figure writes its folder here
    argv = CHEAP[command]
    code = INCONCLUSIVE.get(command, 0)  # a tiny run that cannot resolve 5 % says so (exit 3)
    assert main(argv + ["--json"]) == code
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert isinstance(doc, dict) and doc["command"] == command and isinstance(doc["points"], list)
    assert doc["points"] and all(isinstance(p, dict) for p in doc["points"])
    assert "NaN" not in out and "Infinity" not in out
    path, table_csv = tmp_path / "o.json", tmp_path / "o.csv"
    loud = [a for a in argv if a != "--quiet"]
    assert main(loud + ["--json-out", str(path), "--csv", str(table_csv)]) == code
    cap = capsys.readouterr()
    table = cap.out
    assert not table.lstrip().startswith("{")  # the table, not JSON, on stdout
    for f in (path, table_csv):  # each written file named on stderr
        assert f"icl-symbolic: wrote {f}\n" in cap.err, (command, f)
    assert len(table_csv.read_text().splitlines()) >= 2  # a header and at least one row
    assert main(argv + ["--quiet", "--json-out", str(path)]) == code
    assert "wrote" not in capsys.readouterr().err  # --quiet: silent
    written = json.loads(path.read_text())
    for key in ("seconds", "elapsed_s", "per_seed", "created_utc", "command_line"):  # differ between runs
        for d in [written, doc, *written["points"], *doc["points"]]:
            d.pop(key, None)
    assert written == doc


@pytest.mark.parametrize(
    "argv,option",
    [
        (["coeffs", "g", "--json-out", "o.txt"], "--json-out"),
        (["theory", "g", "--csv", "o.json"], "--csv"),
        (["simulate", "g", "--plot", "o.csv"], "--plot"),
        (["moments", "g", "--plot", "o.txt"], "--plot"),
        (["appendix-a", "identity", "--csv", "o.png"], "--csv"),
        (["verify", "--report", "o.txt"], "--report"),
    ],
)
def test_wrong_output_suffix_is_one_line_before_any_work(argv, option, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{option}: " in err and "must end in" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.sim
def test_old_spellings_still_work_with_a_deprecation_note(tmp_path, capsys):
    f = tmp_path / "t.json"
    assert main(["theory", "--json", str(f), "sin(g)", "--tau", "2"]) == 0  # used to swallow EXPR
    cap = capsys.readouterr()
    assert json.loads(f.read_text())["points"][0]["tau"] == 2.0
    assert "deprecated: 'theory --json FILE' is now 'theory --json-out FILE'" in cap.err
    assert main(["theory", "sin(g)", "--tau", "2", "--json", "-"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["command"] == "theory" and "deprecated" in cap.err
    s = tmp_path / "s.json"
    assert main(["simulate", "g", "--d", "4", "--seeds", "1", "--n-test", "100", "--quiet", "--out", str(s)]) == 0
    cap = capsys.readouterr()
    assert json.loads(s.read_text())["command"] == "simulate"
    assert "deprecated: 'simulate --out FILE' is now 'simulate --json-out FILE'" in cap.err
    assert main(["theory", "sin(g)", "--tau", "2", "--json"]) == 0  # the new spelling: no note
    assert "deprecated" not in capsys.readouterr().err


@pytest.mark.sim
def test_simulate_sweep_through_tau_one_keeps_the_point(tmp_path, capsys):
    c = tmp_path / "s.csv"
    assert (
        main(
            [
                "simulate",
                "g",
                "--d",
                "4",
                "--tau",
                "1,2",
                "--seeds",
                "2",
                "--n-test",
                "200",
                "--quiet",
                "--json",
                "--csv",
                str(c),
            ]
        )
        == 0
    )
    pts = json.loads(capsys.readouterr().out)["points"]
    assert pts[0]["e_theory"] is None and "diverges" in pts[0]["e_theory_reason"]
    assert pts[1]["e_theory"] > 0 and pts[1]["e_theory_reason"] is None
    rows = [r.split(",") for r in c.read_text().splitlines()]
    col = rows[0].index("e_theory")
    assert rows[1][col] == "inf" and float(rows[2][col]) == pytest.approx(pts[1]["e_theory"])


def test_verdicts_are_reported_as_they_are_decided(monkeypatch):
    events = []
    real = runner.run_claim

    def spy(claim, progress=None, cache=None):
        events.append(("run", claim.id))
        return real(claim, progress=progress)

    monkeypatch.setattr(runner, "run_claim", spy)
    claims = select(load_claims(), ["notes.sin_*"])
    runner.run_claims(claims, on_result=lambda r: events.append(("done", r.claim.id)))
    assert len(claims) >= 3
    assert events == [e for c in claims for e in (("run", c.id), ("done", c.id))]


def _words(text):
    return " ".join(text.split())


def test_verbose_shows_the_whole_reason_and_the_numbers(capsys):
    argv = ["verify", "--quiet", "--only", "eq11.below_transition"]
    assert main(argv + ["--json"]) == 0
    detail = json.loads(capsys.readouterr().out)["points"][0]["detail"]
    assert len(detail) > 150
    assert main(argv) == 0
    short = capsys.readouterr().out
    claim_lines = short.split("evidence per paper")[0]
    assert _words(detail) not in _words(short) and _words(claim_lines).endswith("...")
    assert main(argv + ["--verbose"]) == 0
    full = capsys.readouterr().out
    assert _words(detail) in _words(full) and "computed: " in full and "tolerance: " in full


def test_verify_lines_fit_in_100_columns_with_and_without_verbose(capsys):
    """The mismatches (diagnosis and why, hundreds of characters) and the tally included."""
    argv = [
        "verify",
        "--quiet",
        "--only",
        "fig1.caption_noise",
        "--only",
        "fig1.unnormalised_mse",
        "--only",
        "eq11.below_transition",
        "--only",
        "kernel.cubic_captured",
    ]
    assert main(argv + ["--json"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    assert max(len(p["detail"]) for p in points) > 300
    assert capsys.readouterr().err == ""  # --json --quiet: nothing on stderr
    for extra in ([], ["--verbose"]):
        assert main(argv + extra) == 0
        out = capsys.readouterr().out
        assert max(len(line) for line in out.splitlines()) <= 100, extra
        assert "diagnosis: " in out and "mismatch found as expected" in out


def test_tau_one_is_one_rule_in_theory_kernel_simulate_and_extrapolate(capsys):
    """Reported as inf with the one reason (theory, kernel, simulate's e_theory), refused with it where a
    finite value is needed (extrapolate); simulate says why its number at the peak means nothing."""
    from icl_symbolic.theory.peak import AT_PEAK, DIVERGES

    assert main(["theory", "g", "--tau", "1", "--json"]) == 0
    (p,) = json.loads(capsys.readouterr().out)["points"]
    assert p["e"] is None and p["reason"] == DIVERGES
    assert main(["kernel", "g + (g^2-1)/sqrt(2)", "--tau", "0.5,1", "--json"]) == 0
    pts = json.loads(capsys.readouterr().out)["points"]
    assert pts[0]["e"] > 0 and pts[0]["reason"] is None and pts[1]["e"] is None and pts[1]["reason"] == DIVERGES
    assert main(["kernel", "g + (g^2-1)/sqrt(2)", "--tau", "1"]) == 0
    assert f"inf: {DIVERGES}" in capsys.readouterr().out
    assert (
        main(["simulate", "g", "--d", "4", "--tau", "1", "--seeds", "2", "--n-test", "100", "--quiet", "--json"]) == 0
    )
    (p,) = json.loads(capsys.readouterr().out)["points"]
    assert p["e_mean"] > 0 and p["e_theory"] is None and p["e_theory_reason"] == DIVERGES
    assert p["comparison"] == AT_PEAK and p["z"] is None
    assert main(["extrapolate", "g", "--d", "4,6", "--tau", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and DIVERGES in err and "no finite e_inf" in err
    assert main(["theory", "g", "--tau", "1", "--lam", "0.1", "--json"]) == 0  # a ridge: an ordinary point
    assert json.loads(capsys.readouterr().out)["points"][0]["e"] > 0
    cli_doc = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    assert "## tau = 1 (the interpolation peak)" in cli_doc and DIVERGES in " ".join(cli_doc.split())


def test_simulate_compares_with_the_theory_in_words(capsys):
    """z against the d -> infinity theory, the finite-d gap expected at that d (either sign), a pointer to
    extrapolate; a gap beyond the expected one is called so."""
    from icl_symbolic.studies.compare import GAP_X_D, compare

    c = compare(0.7138, 0.003, 0.6963, 64)
    assert c.z == pytest.approx((0.7138 - 0.6963) / 0.003) and c.expected_gap_rel == GAP_X_D["result1"] / 64
    assert "z = +5.8" in c.words and "within the finite-d gap expected at d = 64" in c.words
    assert "either sign" in c.words and "icl-symbolic extrapolate" in c.words
    below = compare(0.68, 0.003, 0.6963, 64)  # below the theory: also within the gap
    assert below.z < 0 and "within" in below.words
    far = compare(0.9, 0.003, 0.6963, 64)
    assert "beyond the finite-d gap" in far.words and "within" not in far.words
    assert compare(2.5, 0.1, 2.2, 16, "a1zero").expected_gap_rel == GAP_X_D["a1zero"] / 16
    assert (
        main(["simulate", "g", "--d", "6", "--tau", "2", "--seeds", "2", "--n-test", "100", "--quiet", "--json"]) == 0
    )
    (p,) = json.loads(capsys.readouterr().out)["points"]
    assert p["z"] == pytest.approx((p["e_mean"] - p["e_theory"]) / p["e_se"])
    assert p["expected_gap_rel"] == pytest.approx(5 / 6) and "extrapolate" in p["comparison"]
    assert main(["simulate", "g", "--d", "6", "--tau", "2", "--seeds", "2", "--n-test", "100", "--quiet"]) == 0
    out = capsys.readouterr().out
    words = out.split("e_theory (d -> infinity")[1]
    assert "z = " in words and "finite-d gap" in " ".join(words.split()) and max(map(len, words.splitlines())) <= 100
