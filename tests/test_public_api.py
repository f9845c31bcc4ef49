"""The public surface: what ``import ag_attention`` gives, and what the README teaches."""

import inspect
import math
import multiprocessing.process
import re
import signal
import subprocess
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ag_attention
from ag_attention import Architecture, dimension
from ag_attention._errors import AgAttentionError, InvalidArgumentError
from ag_attention._exact import linalg
from ag_attention._exact.field import GFp
from ag_attention._exact.onelayer import certify, quadrics
from ag_attention._network import forward, unflatten
from ag_attention._numeric import numerical_dimension
from tests.helpers import ANY_VALUE

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_exists_and_is_documented():
    for name in ag_attention.__all__:
        obj = getattr(ag_attention, name)
        assert (obj.__doc__ or "").strip(), f"ag_attention.{name} has no docstring"
    assert len(set(ag_attention.__all__)) == len(ag_attention.__all__)


def test_the_verbs_and_types_a_user_needs_are_top_level():
    for name in (
        "Architecture",
        "Parametrization",
        "dimension",
        "numerical_dimension",
        "fibers",
        "implicitize",
        "certify",
        "degree",
        "DimensionResult",
        "NumericalResult",
        "FiberResult",
        "Implicitization",
        "DegreeResult",
        "PointVerdict",
        "AgAttentionError",
        "InvalidArgumentError",
        "provenance",
        "upper_bounds",
        "UpperBound",
    ):
        assert name in ag_attention.__all__, name


def test_the_readme_imports_only_from_the_top_level():
    deep = re.findall(r"^(?:>>> )?(?:from|import) ag_attention\.[\w.]+", (ROOT / "README.md").read_text(), flags=re.M)
    assert deep == [], f"the README teaches deep imports: {deep}"


def test_the_readme_is_a_door():
    """The README is short and gives the two commands; CI runs its test command (.ci/run)."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250, "the README is a door: the manual lives in docs/manual/"
    commands = re.search(r"## The two commands\n.*?```sh\n(.*?)```", readme, re.S)
    assert commands is not None
    assert [line.split("#")[0].strip() for line in commands.group(1).splitlines() if line.split("#")[0].strip()] == [
        "make reproduce",
        "make test",
    ]
    ci = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert ci[-1] == "make test"


def test_the_readme_links_and_paths_exist():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    paths = re.findall(r"`((?:docs|bench|examples|m2scripts|ag_attention|tests|sweeps|scripts)/[\w./-]*)`", readme)
    assert links and paths
    for target in links + paths:
        assert (ROOT / target).exists(), f"the README names {target}, which does not exist"
    for room in ("_exact", "_m2", "_models", "_algebra", "_landscape", "_numeric", "_point", "_reproduce", "_sweep"):
        assert f"`ag_attention/{room}/`" in readme, f"the README's map of the package omits {room}"
    assert "tests/data/aldm" not in readme  # the golden files are package data now


def test_errors_share_one_base():
    for name in ag_attention.__all__:
        obj = getattr(ag_attention, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, ag_attention.AgAttentionError), name


@pytest.mark.parametrize(
    "call, named",
    [
        (lambda: dimension(Architecture((3, 3), (2,)), threads=-1), "threads"),
        (lambda: dimension(Architecture((3, 3), (2,)), threads="x"), "threads"),
        (lambda: dimension(Architecture((3, 3), (2,)), threads=True), "threads"),
        (lambda: numerical_dimension(Architecture((3, 3), (2,), normalized=True), min_gap="x"), "min_gap"),
        (lambda: numerical_dimension(Architecture((3, 3), (2,), normalized=True), min_gap=float("nan")), "min_gap"),
        (lambda: numerical_dimension(Architecture((3, 3), (2,), normalized=True), max_doublings=-1), "max_doublings"),
        (lambda: Architecture((3, 3), (2,)).block("Z", 1), "block"),
        (lambda: Architecture((3, 3), (2,)).block("Q", 7), "block"),
        (lambda: unflatten(Architecture((3, 3), (2,)), np.zeros(5)), "theta"),
        (lambda: forward(Architecture((3, 3), (2,)), GFp(101), np.zeros(21, dtype=np.int64), np.zeros((1, 2, 4))), "X"),
        (lambda: GFp(101).einsum("ij,jk,kl->il", np.zeros((2, 2)), np.zeros((2, 2))), "spec"),
        (lambda: linalg.rank(np.zeros(3, dtype=np.int64), 101), "M"),
        (lambda: quadrics([1, 2], 2, 1), "x"),
        (lambda: certify([[1, 2], [3, 4]], [[1, 1]], dimension="5"), "dimension"),
        (lambda: certify([[1, 2], [3, 4]], [[1, 1]], dimension=5, rank_bound=0), "rank_bound"),
        (lambda: certify([[1, 2]], [[1, 1]], dimension=5), "A"),
        (lambda: certify("AV", [[1, 1]], dimension=5), "A"),
        (lambda: Architecture({4, 3}, (2,)), "widths"),  # a set has no order
        (lambda: Architecture((4, 3), (2,), temperature="2"), "temperature"),
        (lambda: Architecture((4, 3), (2,), parametrization=["QKV"]), "parametrization"),
        (lambda: Architecture.from_dict([("widths", (4, 3))]), "data"),
        (lambda: Architecture.from_dict({1: 2, "widths": (3, 3)}), "1"),
    ],
)
def test_errors_are_of_the_family_and_name_the_argument(call, named):
    with pytest.raises(AgAttentionError) as err:
        call()
    assert isinstance(err.value, InvalidArgumentError)
    assert named in str(err.value)


# ----------------------------------------------------------------- every door checks its arguments
#: what a caller may pass by mistake: nothing, numbers (nan, inf), text, bytes, containers, arrays, any object
GARBAGE = st.one_of(
    ANY_VALUE,
    st.integers(),
    st.complex_numbers(),
    st.binary(max_size=4),
    st.text(max_size=6),
    st.lists(st.lists(st.integers(-2, 2), max_size=3), max_size=3),
    st.builds(object),
    st.sampled_from([math.nan, math.inf, -math.inf, "", "\0", [None], ["x"], {"x": 1}, (), np.zeros(2), np.nan]),
)


def _valid() -> dict[str, tuple[object, ...]]:
    """A valid value of every positional argument, by callable: the others get garbage one at a time."""
    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    net = ag_attention.Network.from_weights(
        {"layers.0.heads.0.Q": [[1, 0]], "layers.0.heads.0.K": [[0, 1]], "layers.0.heads.0.V": [[1, 1]]}
    )
    model = ag_attention.polynomial_model(["a", "b"], ["a*b"])
    X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]]]
    Y = [[[1], [0]], [[0], [2]]]
    return {
        "Architecture": ((2, 1),),
        "certify": ([[1, 2], [3, 4]], [[1, 1]]),
        "ideal_ed_degree": (["x", "y"], ["x^2 + y^2 - 1"]),
        "polynomial_model": (["a", "b"], ["a*b"]),
        "PolynomialModel": (model.parameters, model.polynomials, "m"),
        "Network": (arch, net.weights, net.conversion, net.floats),
        "critical_points": (arch, X, Y),
        "point_geometry": (net,),
        "model_ed_degree": (model,),
        "model_critical_points": (model,),
        "sweep": ("grid.toml", "out"),
        "Parametrization": (arch,),
    }


#: keyword arguments held fixed (Architecture: A free, so that any list of widths is a whole architecture)
KEYWORDS = {"Architecture": {"parametrization": "AV"}}

#: arguments where garbage may be valid and the work then starts Macaulay2 or msolve (a polynomial "x")
MAY_START = {("ideal_ed_degree", "generators")}

#: doors that another engineer's files must close, each with its reason (the test expects them to fail)
PENDING: dict[tuple[str, str], str] = {}


def _positional(obj) -> list[str]:
    """The positional arguments of ``obj`` without a default (or its first one, when all have one)."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = [p for p in inspect.signature(obj).parameters.values() if p.kind in kinds]
    return [p.name for p in params if p.default is p.empty] or [p.name for p in params[:1]]


def _doors() -> list[tuple[str, int, str]]:
    """(name, position, argument) of every positional argument of every callable of ``__all__`` (the first one
    even with a default); the exceptions are raised by the package, not doors (test_errors_share_one_base)."""
    doors = []
    for name in ag_attention.__all__:
        obj = getattr(ag_attention, name)
        if callable(obj) and not (isinstance(obj, type) and issubclass(obj, BaseException)):
            doors += [(name, i, argument) for i, argument in enumerate(_positional(obj))]
    return doors


class _Hung(BaseException):
    """A call that took longer than the test allows (a BaseException: no ``except Exception`` swallows it)."""


class _ProcessStarted(BaseException):
    """A call that started a process (Macaulay2, msolve, a worker) with garbage among its arguments."""


@contextmanager
def _guarded(seconds: float, monkeypatch):
    def started(*args, **kwargs):
        raise _ProcessStarted()

    def alarm(signum, frame):
        raise _Hung()

    monkeypatch.setattr(subprocess.Popen, "__init__", started)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", started)
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57]


@pytest.mark.parametrize(
    "name, position, argument",
    [
        pytest.param(*door, marks=pytest.mark.xfail(reason=PENDING[door[0], door[2]], strict=False))
        if (door[0], door[2]) in PENDING
        else door
        for door in _doors()
    ],
)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(garbage=GARBAGE)
def test_every_door_refuses_garbage_by_name(name, position, argument, garbage, tmp_path, monkeypatch):
    """Garbage in any positional argument: a valid result, or the package's error naming the argument or the
    value; never another exception, a process started or a hang (the arguments are checked before any work)."""
    if name == "sweep" and argument == "out" and isinstance(garbage, str) and garbage and "\0" not in garbage:
        return  # any other text is a directory to write the results into
    monkeypatch.chdir(tmp_path)
    (tmp_path / "grid.toml").write_text("[[architecture]]\nwidths = [1, 1]\nranks = [1]\ntokens = 2\n")
    obj = getattr(ag_attention, name)
    args = list(_valid().get(name, (Architecture.single_layer(2, 1, 2, tokens=2),) * len(_positional(obj))))
    args[position:] = [garbage] + args[position + 1 :]
    try:
        with _guarded(20, monkeypatch):
            obj(*args, **KEYWORDS.get(name, {}))
    except AgAttentionError as exc:
        message = str(exc)
        assert argument in message or _shown(garbage) in message, f"{name}({argument}={garbage!r}): {message}"
    except _ProcessStarted:
        assert (name, argument) in MAY_START, f"{name}({argument}={garbage!r}) started a process"
    except _Hung:
        pytest.fail(f"{name}({argument}={garbage!r}) did not return within 20 s")
