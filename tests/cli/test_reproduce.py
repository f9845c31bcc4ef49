"""``reproduce WHAT`` (ag_attention._cli.reproduce): its help, its report and the files it lists, its exit status
(a failed check, Macaulay2 missing or timing out)."""

import json

import pytest

from ag_attention._cli import finish_report, main
from ag_attention._m2 import runner
from ag_attention._reproduce.registry import REPRODUCTIONS
from ag_attention._reproduce.report import Check, Report
from tests.cli import exit_of, run_in_process, run_main
from tests.helpers import fake_m2, no_backends


def test_reproduce_open_questions_from_the_command_line(tmp_path, capsys, monkeypatch):
    # the command on one open question's quick grid (tests/reproduce/test_open_questions.py runs all four)
    import ag_attention._reproduce.open_questions as open_questions

    monkeypatch.setattr(open_questions, "VARIANTS", tuple(v for v in open_questions.VARIANTS if v.name == "skip"))
    status, out, _ = run_main(["reproduce", "open-questions", "--quick", "--out", str(tmp_path), "--quiet"], capsys)
    assert status == 0 and "Open questions" in out and "PASSED" in out
    assert (tmp_path / "report.md").exists() and (tmp_path / "open-questions.json").exists()
    assert "finding: [skip]" in out and "[heads]" not in out  # the one open question asked


def test_cli_exit_status_names_the_failing_case(tmp_path, capsys):
    rep = Report("demo")
    rep.add(Check("a claim", "d=2, d'=1", "method", 1, 2, False))
    status = finish_report(rep, str(tmp_path))
    err = capsys.readouterr().err
    assert status == 1 and "a claim [d=2, d'=1]" in err and "expected 1, observed 2" in err
    assert json.loads((tmp_path / "report.json").read_text())["passed"] is False


def test_reproduce_without_macaulay2_is_one_m2_error(tmp_path, monkeypatch, capsys):
    no_backends(monkeypatch)
    status = main(["reproduce", "theorem-3.4", "--quick", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 3, err
    assert err.count("Macaulay2") >= 1 and err.count("ag-attention: Macaulay2:") == 1 and "FAILED" not in err
    assert "--no-m2" in err


def test_cli_reproduce_with_a_timing_out_item_writes_the_report_and_exits_3(tmp_path, monkeypatch, capsys):
    hanging = fake_m2(tmp_path, "exec sleep 1000")
    monkeypatch.setattr(runner, "default_backends", {"local": hanging, "container": runner.ContainerBackend(engine="")})
    out = tmp_path / "out"
    status = main(["reproduce", "theorem-3.4", "--quick", "--backend", "local", "--m2-timeout", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert json.loads((out / "report.json").read_text())["meta"]["m2_errors"]
    assert err.count("ag-attention: Macaulay2:") == 1 and "did not finish" in err
    assert status == 3


@pytest.mark.parametrize("what", ["training", "theorem-3.4", "landscape"])
def test_reproduce_what_help_describes_that_result(what, capsys):
    # `reproduce training --help` printed the generic reproduce help
    r = run_in_process(capsys, "reproduce", what, "--help")
    assert r.returncode == 0 and f"usage: ag-attention reproduce {what}" in r.stdout
    assert f"default results/{what}" in r.stdout and "Options that apply" in r.stdout
    assert "{theorem-3.4," not in r.stdout  # (the generic help's list of reproductions)


def test_reproduce_help_lists_the_reproductions(capsys):
    generic = run_in_process(capsys, "reproduce", "--help")
    assert generic.returncode == 0 and "{theorem-3.4," in generic.stdout


def test_reproduce_lists_every_file_it_wrote(tmp_path, capsys):
    # the "written to" line named report.md, report.json and the figures it knew of, and omitted other files
    out = tmp_path / "fig3"
    r = run_in_process(capsys, "reproduce", "figure-3", "--quick", "--out", str(out))
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("written to "))
    listed = set(line.split(": ", 1)[1].split(", "))
    present = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert listed == present and {"report.md", "report.json"} <= listed


@pytest.mark.parametrize("name", list(REPRODUCTIONS))
def test_every_reproduction_of_the_table_has_its_help(name, capsys):
    entry = REPRODUCTIONS[name]
    status, out, _ = exit_of(["reproduce", name, "--help"], capsys)
    assert status == 0 and out.startswith(f"usage: ag-attention reproduce {name} [--out DIR] [{entry.options[0]}]")
    assert f"{name}: {entry.help}.\n" in out and f"Options that apply: {', '.join(entry.options)}, --out" in out
