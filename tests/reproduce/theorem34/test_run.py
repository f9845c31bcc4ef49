"""The Theorem 3.4 reproduction (ag_attention._reproduce.theorem34.run): with and without Macaulay2, and checks that
can fail."""

import dataclasses
import json

import pytest

from ag_attention._reproduce import theorem34 as t34
from tests.helpers import no_backends

SMALL = dict(
    m2_grid=(t34.Size(2, 2, 2),), point_grid=(t34.Size(2, 2, 2),), equation_grid=((2, 2, 2, 4),), picture=False
)


@pytest.fixture(scope="module")
def small_report(m2_local):
    return t34.reproduce_theorem_34(t34.Options(**SMALL))


@pytest.mark.m2
def test_small_reproduction_passes(small_report):
    r = small_report
    assert r.passed, [f"{c.claim} [{c.case}]: {c.observed}" for c in r.failures]
    claims = {c.claim.split(":")[0] for c in r.checks}
    for needed in [
        "dim M",
        "Cor. A.1",
        "singular locus (symbolic)",
        "implicit equations",
        "Thm. 3.2",
        "Thm. 3.4 by the closure's equations",
        "singular exactly as predicted (random points of the stratum)",
        "Lemma A.3",
        "Cor. A.6",
        "Cor. 3.3",
    ]:
        assert any(c.startswith(needed) for c in claims), needed
    by_equations = [c for c in r.checks if c.claim.startswith("Thm. 3.4 by the closure's equations")]
    # (2,2,2)'s equations are certified complete, so predicted singular orbits are proven singular over QQ
    proven = [c for c in by_equations if c.expected == "singular"]
    assert proven and all("proven singular" in c.observed and c.details["rank_qq"] < c.details["codim"] for c in proven)
    d = r.to_dict()
    assert d["passed"] is True
    for c in d["checks"]:
        assert {"claim", "case", "method", "expected", "observed", "passed"} <= set(c)
    json.dumps(d)


WRONG = [
    (
        "singular",
        lambda size, f: (f.zero or f.rank_a <= 1, "wrong: rank A <= 1 alone"),
        "singular locus",
        "rank A=1, rank V=2",
    ),
    ("dimension", lambda size: size.dim + 1, "dim M", "7"),
    ("rank_drop", lambda size: size.d, "Lemma A.3", "drop 1"),
    ("base_locus", "A", "Cor. A.1", "A = 0} cup {V = 0"),
    (
        "fiber_components",
        lambda size: {**t34.THEOREM.fiber_components(size), "generic": [(1, 2), (1, 2)]},
        "Thm. 3.2: fibers",
        "generic",
    ),
    (
        "fiber_counts",
        lambda size: {**t34.THEOREM.fiber_counts(size), "rank-one pair": 1},
        "Thm. 3.2: number",
        "rank-one pair",
    ),
    ("conjugate_real_preimage", True, "Cor. A.6", "real=True"),
]


@pytest.mark.m2
@pytest.mark.parametrize("field, wrong, claim, evidence", WRONG, ids=[w[0] for w in WRONG])
def test_each_check_fails_on_a_wrong_prediction(m2_local, field, wrong, claim, evidence):
    theory = dataclasses.replace(t34.THEOREM, name=f"wrong {field}", **{field: wrong})
    r = t34.reproduce_theorem_34(t34.Options(**SMALL, theory=theory))
    assert not r.passed
    failing = [c for c in r.failures if c.claim.startswith(claim)]
    assert failing, [c.claim for c in r.failures]
    text = " ".join(f"{c.observed} {c.details}" for c in failing)
    assert evidence in text


def test_reproduce_with_no_m2_needs_no_macaulay2(monkeypatch):
    from ag_attention._reproduce import theorem34 as t34

    no_backends(monkeypatch)
    report = t34.reproduce_theorem_34(
        t34.Options(
            m2_grid=t34.QUICK_M2_GRID, point_grid=(t34.Size(2, 1, 2),), equation_grid=(), use_m2=False, picture=False
        )
    )
    assert report.passed and "m2_errors" not in report.meta


def _rows(report):
    return [(c.claim, c.case, c.method, str(c.expected), str(c.observed), c.passed) for c in report.checks]


@pytest.mark.m2
def test_concurrent_macaulay2_jobs_give_the_report_of_a_sequential_run(m2_local, monkeypatch):
    """Three Macaulay2 sizes of which the first is the slowest: run two at a time (the largest first) while the
    pointwise checks run, the report lists every check in the order of a run one job at a time, and the Cor. A.6
    checks, which need the Macaulay2 results, sit after their size's fibers."""
    from ag_attention._m2 import session
    from ag_attention._reproduce.theorem34 import run as run_module

    opts = dict(
        m2_grid=(t34.Size(2, 2, 2), t34.Size(2, 1, 1), t34.Size(2, 3, 1)),
        point_grid=(t34.Size(2, 2, 2), t34.Size(2, 1, 2)),
        equation_grid=(),
        picture=False,
    )
    reports = {}
    for slots in (1, 2):
        monkeypatch.setattr(session, "job_slots", lambda memory, n=slots: n)  # the session pools
        monkeypatch.setattr(run_module, "job_slots", lambda memory, n=slots: n)  # the run's own slots
        reports[slots] = t34.reproduce_theorem_34(t34.Options(**opts))
        assert reports[slots].meta["m2_jobs_at_once"] == slots
    assert _rows(reports[1]) == _rows(reports[2]) and reports[2].passed
    cases = [c.case for c in reports[2].checks]
    m2_sizes = [c.case for c in reports[2].checks if "Macaulay2" in c.method]
    assert cases[: len(m2_sizes)] == m2_sizes  # the Macaulay2 checks first, in grid order
    assert [s for i, s in enumerate(m2_sizes) if s not in m2_sizes[:i]] == [str(s) for s in opts["m2_grid"]]
    a6 = [i for i, c in enumerate(reports[2].checks) if c.claim.startswith("Cor. A.6")]
    assert [reports[2].checks[i].case for i in a6] == ["d=2, d'=2, A free", "d=2, d'=1, A free"]
    assert all(reports[2].checks[i - 1].claim.startswith("Thm. 3.2: number") for i in a6)
    assert "on closure=True" in reports[2].checks[a6[0]].observed  # (2, 2, 2) had its Macaulay2 result


@pytest.mark.m2
def test_an_interruption_kills_the_macaulay2_jobs_under_way(m2_local, monkeypatch):
    """KeyboardInterrupt while the main thread computes and a Macaulay2 job runs in a worker thread: when the
    interruption comes out, no Macaulay2 process of the run is left (the job did not finish by itself: it loops)."""
    import threading
    import time

    from ag_attention._m2 import runner
    from ag_attention._m2.process import group_members
    from ag_attention._m2.session import pool_for
    from ag_attention._reproduce.theorem34 import run as run_module
    from ag_attention._reproduce.theorem34 import symbolic

    monkeypatch.setattr(symbolic, "m2_job_body", lambda *a: "while true do null;\nresult = hashTable {};")
    started = threading.Event()

    def interrupted(report, opts, say):
        deadline = time.monotonic() + 60
        while not pool_for(runner.get_backend("local")).pids and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the session has started: the endless job is under way in it
        started.set()
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, "_run_pointwise", interrupted)
    pool = pool_for(runner.get_backend("local"))
    pool.close()
    pool.pids.clear()
    pool.started = 0
    with pytest.raises(KeyboardInterrupt):
        t34.reproduce_theorem_34(
            t34.Options(
                m2_grid=(t34.Size(2, 1, 1),),
                point_grid=(),
                equation_grid=(),
                picture=False,
                backend="local",
                m2_timeout=120,
            )
        )
    assert started.is_set() and pool.pids
    assert [pid for pid in pool.pids if group_members(pid)] == []  # checked at once: nothing left running


@pytest.mark.m2
def test_the_macaulay2_jobs_say_how_many_have_finished(m2_local, capsys):
    """Off a terminal (a log) a line as each Macaulay2 job finishes: k/n, the time elapsed and, before the last,
    about how long is left; on standard error only."""
    import re

    opts = t34.Options(m2_grid=(t34.Size(2, 1, 1), t34.Size(2, 1, 2)), point_grid=(), equation_grid=(), picture=False)
    assert t34.reproduce_theorem_34(opts).passed
    out, err = capsys.readouterr()
    lines = re.findall(r"^Macaulay2: (\d)/2 jobs finished, \d\d:\d\d elapsed(, about \d\d:\d\d left)?$", err, re.M)
    assert lines == [("1", lines[0][1]), ("2", "")] and lines[0][1], err
    assert "Macaulay2" not in out
