"""The settings of ``reproduce icl`` (:mod:`ag_attention._reproduce.icl`): the task's sizes, the runs, their cost.

:data:`QUICK` and :data:`FULL` are the reproductions the command runs; :func:`settings_for` replaces ``D``, the heads,
``N`` or the steps within :data:`LIMITS`, and refuses a setting :func:`estimate` puts beyond :data:`MAX_SECONDS` or
:data:`MAX_BYTES`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._checks import check_int
from .._errors import InvalidArgumentError
from .icl_dynamics import MAX_RECORDS, RECORDS_PER_DECADE

__all__ = [
    "Setting",
    "QUICK",
    "FULL",
    "LIMITS",
    "MAX_SECONDS",
    "MAX_BYTES",
    "SPREAD_SEQUENCES",
    "settings_for",
    "estimate",
]


@dataclass(frozen=True)
class Setting:
    """One reproduction: the task (``D``, ``N``, sequences), the two regimes' heads, steps and step sizes."""

    D: int = 4
    N: int = 31
    train: int = 20_000
    test: int = 200_000
    heads_merged: int = 8
    #: the first is their figure's (H > D: every stratum visited); fewer heads stop on the stratum {rank <= H}
    heads_separate: tuple[int, ...] = (5, 2, 1)
    steps_merged: int = 3_000
    steps_separate: int = 60_000
    lr_merged: float = 0.1
    #: 0.5 passes the saddles faster but overshoots at the drops (the loss rose by up to 0.057 in a step; 0.3: 0.002)
    lr_separate: float = 0.3
    init_merged: float = 1e-3
    init_separate: float = 1e-2
    seeds: tuple[int, ...] = (0,)
    record_every: int = 10

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


#: about 15 s: D = 4 (their figures' size), one seed
QUICK = Setting()


#: about 2 minutes: D = 4 with five seeds and four times the data, and D = 3
FULL = (
    Setting(train=80_000, test=400_000, seeds=(0, 1, 2, 3, 4), heads_separate=(5, 3, 2, 1)),
    Setting(D=3, train=80_000, test=400_000, heads_separate=(4, 2, 1), seeds=(0, 1, 2)),
)


#: the values ``dims``, ``heads``, ``context`` and ``steps`` may take (the estimate below bounds their product)
LIMITS = {"dims": (1, 12), "heads": (1, 64), "context": (1, 10_000), "steps": (1, 10_000_000)}


#: the most a setting may be estimated to take: seconds of arithmetic, bytes held at once
MAX_SECONDS = 3_600.0


MAX_BYTES = 2 * 2**30


def _whole(name: str, value: Any) -> int:
    low, high = LIMITS[name]
    return check_int(value, name, minimum=low, maximum=high)


def settings_for(
    quick: bool = False,
    dims: int | None = None,
    heads: int | Sequence[int] | None = None,
    context: int | None = None,
    steps: int | None = None,
) -> tuple[Setting, ...]:
    """The settings of a reproduction: :data:`QUICK` or :data:`FULL`; with any of ``dims`` (``D``), ``heads``
    (separate rank-one heads, one run each; the merged run gets the most of them), ``context`` (``N``) or ``steps``
    (every run's), the quick setting (``quick``) or the full run's first (five seeds) with those replaced, alone.
    Refused (:class:`InvalidArgumentError`, naming the value) outside :data:`LIMITS` or when :func:`estimate`
    exceeds :data:`MAX_SECONDS` or :data:`MAX_BYTES`."""
    if not isinstance(quick, bool):
        raise InvalidArgumentError(f"quick={quick!r}: must be True or False")
    if dims is None and heads is None and context is None and steps is None:
        return (QUICK,) if quick else FULL
    base = QUICK if quick else FULL[0]
    changes: dict[str, Any] = {}
    if dims is not None:
        changes["D"] = _whole("dims", dims)
    if heads is not None:
        many = tuple(heads) if isinstance(heads, (list, tuple)) else (heads,)
        if not many:
            raise InvalidArgumentError("heads=(): at least one number of heads")
        changes["heads_separate"] = tuple(_whole("heads", h) for h in many)
        changes["heads_merged"] = max(changes["heads_separate"])
    if context is not None:
        changes["N"] = _whole("context", context)
    if steps is not None:
        changes["steps_merged"] = changes["steps_separate"] = _whole("steps", steps)
    setting = replace(base, **changes)
    seconds, held = estimate(setting)
    if seconds > MAX_SECONDS or held > MAX_BYTES:
        raise InvalidArgumentError(
            f"dims={setting.D}, heads={list(setting.heads_separate)}, context={setting.N}, steps="
            f"{setting.steps_separate:,}: estimated {seconds:,.0f} s and {held / 2**20:,.0f} MiB, beyond "
            f"{MAX_SECONDS:,.0f} s or {MAX_BYTES / 2**20:,.0f} MiB: choose smaller values"
        )
    return (setting,)


def estimate(setting: Setting) -> tuple[float, int]:
    """Rough seconds and bytes of one setting (this machine's rates, measured on the quick run): the Gram matrices
    of the task (``(D+1)^6`` per sequence), the gradient steps (a ``(D+1)^3``-square product each, and a fixed cost),
    the records every run keeps (weights of every head).  Not counted: the exact geometry at each plateau, bounded
    by its timeout."""
    n3 = (setting.D + 1) ** 3
    sequences = setting.train + setting.test + SPREAD_SEQUENCES * (setting.D + 2)
    per_seed = sequences * (n3 * n3 + 2 * (setting.N + 1) * (setting.D + 1) ** 2) / 3e9
    runs = [(setting.heads_merged, setting.steps_merged)] + [
        (h, setting.steps_separate) for h in setting.heads_separate
    ]
    per_seed += sum(steps * (2.5e-5 + 3 * n3 * n3 / 1e9 + 6 * h * n3 / 1e9) for h, steps in runs)
    records = max(
        h * (setting.D + 1) * (setting.D + 2) * 8 * (MAX_RECORDS + RECORDS_PER_DECADE * math.log10(steps) + 2)
        for h, steps in runs
    )
    held = 2 * n3 * n3 * 8 + records + 3 * 64 * 2**20
    return per_seed * len(setting.seeds), int(held)


#: fresh sequences drawn at each plateau to estimate ``sd``
SPREAD_SEQUENCES = 5_000
