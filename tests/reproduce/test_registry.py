"""The table of reproductions (ag_attention._reproduce.registry): a reproduction added to it is a command of
``ag-attention reproduce``, in its help, run with the options it takes, refused with the others."""

import json

import pytest

from ag_attention._cli import main
from ag_attention._cli.reproduce import OWN_OPTIONS
from ag_attention._reproduce.registry import REPRODUCTIONS, Lazy, Reproduction, Request
from ag_attention._reproduce.report import Check, Report
from tests.cli import exit_of


def _toy_reproduction(requests, checked=None, **kwargs):
    """A toy reproduction (one check: 1 + 1 = 2) that records the requests it was run with."""

    def run(request):
        requests.append(request)
        report = Report("Toy: one plus one")
        report.add(Check("1 + 1 = 2", f"seed {request.seed}", "addition", 2, 1 + 1, True))
        return report

    return Reproduction("toy", "a toy result: one plus one", run, after=checked, **kwargs)


def test_a_reproduction_added_to_the_table_is_a_command(tmp_path, monkeypatch, capsys):
    requests, checked = [], []
    monkeypatch.setitem(REPRODUCTIONS, "toy", _toy_reproduction(requests, checked.append))
    monkeypatch.chdir(tmp_path)

    status, out, _ = exit_of(["reproduce", "--help"], capsys)
    assert status == 0 and ",icl,toy}" in out
    status, out, _ = exit_of(["reproduce", "toy", "--help"], capsys)
    assert status == 0 and out.startswith("usage: ag-attention reproduce toy [--out DIR] [--quick] [--seed] [--json]")
    assert "toy: a toy result: one plus one.\n" in out and "(default results/toy)" in out
    assert "Options that apply: --quick, --seed, --out, --json, --quiet." in out

    assert main(["reproduce", "toy", "--quick", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "Toy: one plus one: PASSED (1 checks)" in out and "written to results/toy: report.json, report.md" in out
    assert json.loads((tmp_path / "results" / "toy" / "report.json").read_text())["passed"] is True
    assert (tmp_path / "results" / "toy" / "report.md").is_file()
    (request,) = requests
    assert (request.out, request.quick, request.seed, request.option("wide")) == ("results/toy", True, 3, None)
    assert [r.title for r in checked] == ["Toy: one plus one"]  # `after`, once the report is written

    status, out, _ = exit_of(["reproduce", "toy", "--out", str(tmp_path / "elsewhere"), "--json"], capsys)
    assert status == 0 and json.loads(out)["passed"] is True and (tmp_path / "elsewhere" / "report.md").is_file()


def test_an_unknown_reproduction_or_an_option_it_does_not_take_exits_2_naming_it(tmp_path, monkeypatch, capsys):
    requests = []
    monkeypatch.setitem(REPRODUCTIONS, "toy", _toy_reproduction(requests, options=("--seed",)))
    monkeypatch.chdir(tmp_path)
    status, _, err = exit_of(["reproduce", "toys"], capsys)
    assert status == 2 and "invalid choice: 'toys'" in err and "'toy'" in err
    status, _, err = exit_of(["reproduce", "toy", "--wide"], capsys)
    assert status == 2 and "--wide: only for `reproduce certification`, not toy" in err
    status, _, err = exit_of(["reproduce", "toy", "--quick"], capsys)
    assert status == 2 and "--quick: only for `reproduce theorem-3.4` and " in err and err.rstrip().endswith("not toy")
    assert requests == [] and list(tmp_path.iterdir()) == []


def test_every_entry_is_named_by_its_key_and_takes_only_options_the_command_has():
    assert list(REPRODUCTIONS)[:2] == ["theorem-3.4", "corollary-3.8"]  # the order of `reproduce --help`
    for name, entry in REPRODUCTIONS.items():
        assert entry.name == name and entry.out == f"results/{name}" and entry.help and not entry.help.endswith(".")
        assert set(entry.options) <= {"--quick", "--seed", *OWN_OPTIONS}, name
    assert REPRODUCTIONS["theorem-3.4"].after is not None and REPRODUCTIONS["figure-3"].figures


@pytest.mark.parametrize("name", [n for n, r in REPRODUCTIONS.items() if isinstance(r.run, Lazy)])
def test_every_lazy_entry_names_a_function_that_exists(name):
    assert callable(REPRODUCTIONS[name].run.load())


def test_a_lazy_entry_calls_its_function_with_out_quick_and_seed(monkeypatch):
    import ag_attention._reproduce.training as training

    calls = []
    monkeypatch.setattr(training, "reproduce_training", lambda out, *, quick, seed: calls.append((out, quick, seed)))
    Lazy("ag_attention._reproduce.training", "reproduce_training")(Request("out", quick=True, seed=7))
    assert calls == [("out", True, 7)]
    assert Reproduction("x", "a result", calls.append, out="elsewhere").out == "elsewhere"
