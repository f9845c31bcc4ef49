"""The checkpoint of a monodromy solve (:class:`~.monodromy.Monodromy`): its state written atomically to a NumPy
``.npz`` file (the base, the solutions and their charts, the loops, the pairs still to run, the random generator,
the counters) and read back, refused when the file is not such a state or belongs to another problem (its
``fingerprint``)."""

from __future__ import annotations

import json
import os
import stat
import time
import zipfile
import zlib
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError, OutputError
from .._files import atomic_open, reserve
from .._resources import format_bytes, memory_limit
from .homotopy import Deduplicator
from .tracker import _charts, _invariants

__all__ = ["FORMAT", "read_state", "write_state", "check_state_paths"]

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
        "trace_pencils": state.trace_pencils,
        "round_mark": state.round_mark,
        "quiet": state.quiet,
        "seconds": state.seconds + (0.0 if state._run_start is None else time.perf_counter() - state._run_start),
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
    try:
        state.rng.bit_generator.state = meta["rng"]
        history = [(int(h[0]), int(h[1]), int(h[2])) for h in meta["history"]]
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise InvalidArgumentError(f"{where}: not a saved monodromy state (its generator or history: {exc})") from None
    state.p0 = np.asarray(data["p0"], dtype=complex)
    state.found = Deduplicator(system.n, seed=state.seed)
    keys = _invariants(system, points, charts if nc else None)
    for k in range(len(points)):
        state.found.add(points[k], keys[k], charts[k] if nc else None)
    state.corners = list(corners)
    state.queue = deque((int(i), int(j)) for i, j in queued)
    state._init_counters()
    state.paths, state.failures, state.injected = int(meta["paths"]), int(meta["failures"]), int(meta["injected"])
    state.history = history
    state.trace = meta["trace"]
    state.traced_at, state.round_mark, state.quiet = int(meta["traced_at"]), meta["round_mark"], int(meta["quiet"])
    pencils = meta.get("trace_pencils", 1)  # (a file of the rule of one pencil)
    state.trace_pencils = pencils if isinstance(pencils, int) and not isinstance(pencils, bool) else 0
    state.seconds = float(meta["seconds"])
    state._run_start = None
    state.resumed = True
    state.checkpoint = str(path)
    return state


#: the arrays of a state file, and the types its metadata must have
MEMBERS = ("meta", "p0", "points", "charts", "corners", "queued")
META_TYPES: dict[str, Any] = {
    "format": str, "fingerprint": str, "seed": int, "paths": int, "failures": int, "injected": int,
    "history": list, "trace": (float, int, type(None)), "traced_at": int, "round_mark": (int, type(None)),
    "quiet": int, "seconds": (float, int), "rng": dict, "n": int, "n_chart": int,
}  # fmt: skip


def check_state_paths(save: Any, resume: Any) -> None:
    """Before any work: ``resume`` a regular file whose declared arrays are those of a state and fit in memory
    (:class:`InvalidArgumentError`, exit 2), ``save`` a file that can be written (its directory writable, not a
    directory, not a symbolic link: :class:`~ag_attention.OutputError`, exit 4)."""
    if resume is not None:
        _declared(f"resume file {resume}", resume)
    if save is not None:
        target = Path(save)
        if target.is_symlink():
            raise OutputError(
                f"--save {target}: a symbolic link; the state is never written through one", path=str(target)
            )
        if target.is_dir():
            raise OutputError(f"--save {target}: a directory, not a file", path=str(target))
        reserve(target.parent if str(target.parent) else Path("."), 0)


def _declared(where: str, path: str | Path) -> int:
    """The bytes a state file's arrays declare, once it is checked to be a regular file and a zip archive of a
    state's arrays whose declared size fits the memory (read from its directory, before anything is loaded)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InvalidArgumentError(f"{where}: no such file") from None
    except OSError as exc:
        raise InvalidArgumentError(f"{where}: cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InvalidArgumentError(f"{where}: not a regular file (a saved monodromy state is a .npz file)")
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise InvalidArgumentError(
            f"{where}: not a saved monodromy state (damaged or not a .npz file: {exc})"
        ) from None
    names = sorted(i.filename for i in infos)
    if "meta.npy" not in names or not set(names) <= {f"{m}.npy" for m in MEMBERS}:
        raise InvalidArgumentError(f"{where}: not a saved monodromy state (its arrays are {names[:8]})")
    total = sum(i.file_size for i in infos)
    limit = memory_limit().bytes
    if limit is not None and 3 * total > limit:
        raise InvalidArgumentError(
            f"{where}: its arrays declare {format_bytes(total)}, more than a third of the memory available "
            f"({format_bytes(limit)}): not read"
        )
    return total


def _load(where: str, path: str | Path, fingerprint: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The arrays and the metadata of a state file, refused when it is not one of this problem."""
    _declared(where, path)
    try:
        with np.load(path, allow_pickle=False) as f:
            data = {k: f[k] for k in f.files}
    except FileNotFoundError:
        raise InvalidArgumentError(f"{where}: no such file") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, KeyError) as exc:
        raise InvalidArgumentError(f"{where}: not a saved monodromy state ({exc})") from None
    try:
        meta = json.loads(str(data["meta"]))
        ok = isinstance(meta, dict) and meta.get("format") == FORMAT
    except (KeyError, ValueError, RecursionError):
        ok = False
    if not ok:
        raise InvalidArgumentError(f"{where}: not a saved monodromy state of this format ({FORMAT!r})")
    missing = [m for m in MEMBERS if m not in data]
    if missing:
        raise InvalidArgumentError(f"{where}: not a saved monodromy state (no {', '.join(missing)})")
    wrong = [
        k for k, t in META_TYPES.items() if k not in meta or isinstance(meta[k], bool) or not isinstance(meta[k], t)
    ]
    kinds = {"p0": "c", "points": "c", "charts": "c", "corners": "c", "queued": "i"}
    wrong += [k for k, kind in kinds.items() if data[k].dtype.kind not in (kind, "f", "i") or data[k].dtype.kind == "O"]
    if wrong:
        raise InvalidArgumentError(f"{where}: not a saved monodromy state (wrong or missing: {', '.join(wrong)})")
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
