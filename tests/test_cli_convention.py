"""One convention for every command (docs/cli.md): output options, JSON shape, defaults, help,
exit statuses, old spellings, diverging points, streaming verdicts."""

import argparse
import json

import pytest

from icl_symbolic.core import defaults
from icl_symbolic.cli import COMMANDS, build_parser, main
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


def test_the_same_defaults_across_commands():
    subs = _subparsers()
    for name, p in subs.items():
        opts = {o: a for a in p._actions for o in a.option_strings}
        if "--rho" in opts:
            assert opts["--rho"].default == defaults.RHO, name
        if name == "kernel":        # --alpha/--kappa/--tau/--d there are the learner's (ell/D, k/D, n/D^2)
            continue
        if "--d" in opts and name not in ("figure", "theory", "extrapolate"):   # extrapolate: --d is a ladder
            assert int(opts["--d"].default) == defaults.D, name
        for opt, value in (("--alpha", defaults.ALPHA), ("--kappa", defaults.KAPPA), ("--lam", defaults.LAM),
                           ("--seeds", defaults.SEEDS)):
            if opt in opts and opts[opt].default is not None and name != "figure":
                assert float(opts[opt].default) == value, (name, opt)
        for opt in ("--json", "--json-out", "--quiet"):
            if name != "figure":
                assert opt in opts or (opt == "--quiet" and name in ("appendix-a", "diagnose")), (name, opt)


CHEAP = {
    "coeffs": ["coeffs", "g**3", "--M", "3"],
    "moments": ["moments", "g", "--d", "4", "--ell", "8"],
    "appendix-a": ["appendix-a", "identity", "--d", "10"],
    "theory": ["theory", "sin(g)", "--tau", "0.5,2"],
    "simulate": ["simulate", "g", "--d", "4", "--seeds", "2", "--n-test", "200", "--quiet"],
    "verify": ["verify", "--quiet", "--only", "fig1.offset_exactly_one"],
    "diagnose": ["diagnose", "sin(g)", "--value", "1.447"],
    "kernel": ["kernel", "g + (g^2-1)/sqrt(2)", "--features", "hermite:1", "--d", "4", "--tau", "4"],
    "extrapolate": ["extrapolate", "g", "--d", "4,6", "--seeds", "2", "--n-test", "100", "--quiet",
                    "--false-alarm", "1e-12"],
}


@pytest.mark.parametrize("command", [pytest.param(c, marks=pytest.mark.sim) if c == "simulate" else c
                                     for c in sorted(CHEAP)])
def test_json_is_one_object_with_points_and_json_out_writes_the_same(command, tmp_path, capsys):
    argv = CHEAP[command]
    assert main(argv + ["--json"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert isinstance(doc, dict) and doc["command"] == command and isinstance(doc["points"], list)
    assert doc["points"] and all(isinstance(p, dict) for p in doc["points"])
    assert "NaN" not in out and "Infinity" not in out
    path = tmp_path / "o.json"
    assert main(argv + ["--json-out", str(path)]) == 0
    table = capsys.readouterr().out
    assert not table.lstrip().startswith("{")                 # the table, not JSON, on stdout
    written = json.loads(path.read_text())
    for key in ("seconds", "elapsed_s", "per_seed"):          # timings differ between runs
        for d in [written, doc, *written["points"], *doc["points"]]:
            d.pop(key, None)
    assert written == doc


@pytest.mark.parametrize("argv,option", [
    (["coeffs", "g", "--json-out", "o.txt"], "--json-out"),
    (["theory", "g", "--csv", "o.json"], "--csv"),
    (["simulate", "g", "--plot", "o.csv"], "--plot"),
    (["moments", "g", "--plot", "o.txt"], "--plot"),
    (["appendix-a", "identity", "--csv", "o.png"], "--csv"),
    (["verify", "--report", "o.txt"], "--report"),
])
def test_wrong_output_suffix_is_one_line_before_any_work(argv, option, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{option}: " in err and "must end in" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.sim
def test_old_spellings_still_work_with_a_deprecation_note(tmp_path, capsys):
    f = tmp_path / "t.json"
    assert main(["theory", "--json", str(f), "sin(g)", "--tau", "2"]) == 0      # used to swallow EXPR
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
    assert main(["theory", "sin(g)", "--tau", "2", "--json"]) == 0          # the new spelling: no note
    assert "deprecated" not in capsys.readouterr().err


@pytest.mark.sim
def test_simulate_sweep_through_tau_one_keeps_the_point(tmp_path, capsys):
    c = tmp_path / "s.csv"
    assert main(["simulate", "g", "--d", "4", "--tau", "1,2", "--seeds", "2", "--n-test", "200", "--quiet",
                 "--json", "--csv", str(c)]) == 0
    pts = json.loads(capsys.readouterr().out)["points"]
    assert pts[0]["e_theory"] is None and "diverges" in pts[0]["e_theory_reason"]
    assert pts[1]["e_theory"] > 0 and pts[1]["e_theory_reason"] is None
    rows = c.read_text().splitlines()
    assert rows[1].endswith(",inf") and not rows[2].endswith(",inf")


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


def test_verbose_shows_the_whole_reason_and_the_numbers(capsys):
    argv = ["verify", "--quiet", "--only", "eq11.below_transition"]
    assert main(argv + ["--json"]) == 0
    detail = json.loads(capsys.readouterr().out)["points"][0]["detail"]
    assert len(detail) > 150
    assert main(argv) == 0
    short = capsys.readouterr().out
    assert detail not in short and "..." in short.splitlines()[0]
    assert main(argv + ["--verbose"]) == 0
    full = capsys.readouterr().out
    assert detail in full and "computed: " in full and "tolerance: " in full
