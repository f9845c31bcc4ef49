"""The checkpoint of a monodromy solve (:class:`~.monodromy.Monodromy`): its state written atomically to a NumPy
``.npz`` file (the base, the solutions and their charts, the loops, the pairs still to run, the random generator,
the counters) and read back, refused when the file is not such a state or belongs to another problem (its
``fingerprint``)."""

from __future__ import annotations

import json
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .._files import atomic_open
from .homotopy import Deduplicator
from .tracker import _charts, _invariants

__all__ = ["FORMAT", "read_state", "write_state"]

#: the checkpoint format
FORMAT = "ag-attention monodromy state 1"


def write_state(state: Any, path: str | Path, queued: list[tuple[int, int]]) -> None:
    """Write a :class:`~.monodromy.Monodromy`'s state to ``path`` atomically, ``queued`` its pairs still to run."""
    meta = {
        "format": FORMAT,
        "fingerprint": state.fingerprint,
        "seed": state.seed,
        "paths": state.paths,
        "failures": state.failures,
        "injected": state.injected,
        "history": state.history,
        "trace": state.trace,
        "traced_at": state.traced_at,
        "round_mark": state.round_mark,
        "quiet": state.quiet,
        "seconds": state.seconds + (0.0 if state._run_start is None else time.monotonic() - state._run_start),
        "rng": state.rng.bit_generator.state,
        "n": state.system.n,
        "n_chart": state.nc,
        "saved": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    charts = state.found.chart_array(state.nc)
    arrays = {
        "meta": np.array(json.dumps(meta)),
        "p0": state.p0,
        "points": state.found.array(),
        "charts": np.zeros((len(state.found), 0), dtype=complex) if charts is None else charts,
        "corners": np.stack(state.corners),
        "queued": np.array(queued, dtype=np.int64).reshape(-1, 2),
    }
    with atomic_open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    state.checkpoint = str(path)


def read_state(cls: Any, system: Any, path: str | Path, fingerprint: str = "") -> Any:
    """The state (a ``cls``: :class:`~.monodromy.Monodromy`) saved in ``path`` (by :func:`write_state`), for
    ``system``; refused when the file is not such a state or belongs to another problem (its fingerprint)."""
    where = f"resume file {path}"
    data, meta = _load(where, path, fingerprint)
    nc = _charts(system)
    _check_shapes(where, system, nc, data, meta)
    points, charts, corners, queued = data["points"], data["charts"], data["corners"], data["queued"]
    state = cls.__new__(cls)
    state.system, state.nc, state.fingerprint, state.seed = system, nc, fingerprint, int(meta["seed"])
    state.rng = np.random.default_rng()
    state.rng.bit_generator.state = meta["rng"]
    state.p0 = np.asarray(data["p0"], dtype=complex)
    state.found = Deduplicator(system.n, seed=state.seed)
    keys = _invariants(system, points, charts if nc else None)
    for k in range(len(points)):
        state.found.add(points[k], keys[k], charts[k] if nc else None)
    state.corners = list(corners)
    state.queue = deque((int(i), int(j)) for i, j in queued)
    state._init_counters()
    state.paths, state.failures, state.injected = int(meta["paths"]), int(meta["failures"]), int(meta["injected"])
    state.history = [(int(h[0]), int(h[1]), int(h[2])) for h in meta["history"]]
    state.trace = meta["trace"]
    state.traced_at, state.round_mark, state.quiet = int(meta["traced_at"]), meta["round_mark"], int(meta["quiet"])
    state.seconds = float(meta["seconds"])
    state._run_start = None
    state.resumed = True
    state.checkpoint = str(path)
    return state


def _load(where: str, path: str | Path, fingerprint: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The arrays and the metadata of a state file, refused when it is not one of this problem."""
    try:
        with np.load(path, allow_pickle=False) as f:
            data = {k: f[k] for k in f.files}
    except FileNotFoundError:
        raise InvalidArgumentError(f"{where}: no such file") from None
    except (OSError, ValueError, EOFError) as exc:
        raise InvalidArgumentError(f"{where}: not a saved monodromy state ({exc})") from None
    try:
        meta = json.loads(str(data["meta"]))
        ok = isinstance(meta, dict) and meta.get("format") == FORMAT
    except (KeyError, ValueError):
        ok = False
    if not ok:
        raise InvalidArgumentError(f"{where}: not a saved monodromy state of this format ({FORMAT!r})")
    if meta["fingerprint"] != fingerprint:
        raise InvalidArgumentError(
            f"{where}: saved for another problem (fingerprint {meta['fingerprint'][:16]} "
            f"is not this problem's {fingerprint[:16]}: another size, form, data or "
            "seed)"
        )
    return data, meta


def _check_shapes(where: str, system: Any, nc: int, data: dict[str, Any], meta: dict[str, Any]) -> None:
    """The arrays must fit ``system`` (its unknowns and chart coordinates) and each other."""
    points, charts, corners, queued = data["points"], data["charts"], data["corners"], data["queued"]
    m = int(np.asarray(data["p0"]).size)
    shapes_ok = (
        meta["n"] == system.n
        and meta["n_chart"] == nc
        and points.ndim == 2
        and len(points) >= 1
        and points.shape[1] == system.n
        and charts.shape == (len(points), nc)
        and corners.ndim == 3
        and corners.shape[1:] == (4, m)
        and queued.ndim == 2
        and queued.shape[1] == 2
        and (
            queued.size == 0
            or (
                queued[:, 0].min() >= 0
                and queued[:, 0].max() < len(points)
                and queued[:, 1].min() >= 0
                and queued[:, 1].max() < len(corners)
            )
        )
    )
    if not shapes_ok:
        raise InvalidArgumentError(
            f"{where}: its arrays do not fit this system ({system.n} unknowns, {nc} chart coordinates)"
        )
