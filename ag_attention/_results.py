"""What every result object shares: Markdown for notebooks and a pandas row.

A result class defines ``to_dict()`` (the ``--json`` object) and ``__str__``
(its summary); :class:`ResultMixin` derives from them

* ``_repr_markdown_()``: the summary and a table of the scalar fields, which
  Jupyter shows for a result left as a cell's value;
* ``to_frame()``: a one-row :class:`pandas.DataFrame` with typed columns
  (integers, booleans, floats, strings; nested objects flattened to
  ``outer.inner`` columns, lists kept as lists). pandas is the optional extra
  ``frames``.

>>> from dataclasses import dataclass
>>> @dataclass
... class R(ResultMixin):
...     n: int
...     def to_dict(self):
...         return {"n": self.n, "architecture": {"widths": [2, 1]}, "certified": True}
...     def __str__(self):
...         return f"n = {self.n}"
>>> print(R(3)._repr_markdown_())
n = 3
<BLANKLINE>
| field | value |
|---|---|
| n | 3 |
| architecture.widths | [2, 1] |
| certified | true |
>>> flatten(R(3).to_dict())
{'n': 3, 'architecture.widths': [2, 1], 'certified': True}
"""

from __future__ import annotations

import json
from typing import Any

from ._errors import InvalidArgumentError

__all__ = ["ResultMixin", "flatten", "to_frame", "dimension_fields"]


def flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dictionaries as ``outer.inner`` keys; other values unchanged."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _cell(v: Any) -> str:
    text = json.dumps(v, default=str) if not isinstance(v, str) else v
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 120 else text[:117] + "..."


_DTYPES = ((bool, "boolean"), (int, "Int64"), (float, "Float64"), (str, "string"))


def _dtype(values: list[Any]) -> str | None:
    """The nullable pandas dtype of a column from its Python values (bool before int: True is an int)."""
    present = [v for v in values if v is not None]
    for kind, dtype in _DTYPES:
        if present and all(type(v) is kind for v in present):
            return dtype
    if present and all(type(v) in (int, float) for v in present):
        return "Float64"
    return None  # lists, mixed: object


def to_frame(rows: list[dict[str, Any]]) -> Any:
    """A :class:`pandas.DataFrame` of result dictionaries (flattened), typed by the values' Python types."""
    try:
        import pandas as pd
    except ImportError:
        raise InvalidArgumentError("to_frame() needs pandas: pip install pandas (extra 'frames')") from None
    flat = [flatten(r) for r in rows]
    frame = pd.DataFrame(flat)
    for col in frame.columns:
        dtype = _dtype([r.get(col) for r in flat])
        if dtype is not None:
            frame[col] = frame[col].astype(dtype)
    return frame


def dimension_fields(result: Any) -> dict[str, Any]:
    """The opening of a dimension result's ``to_dict()`` (exact or float64): the network, the value, the formula."""
    return {
        "architecture": result.architecture.to_dict(),
        "dimension": result.dimension,
        "parameters": result.parameters,
        "fiber_dimension": result.fiber_dimension,
        **result.expected.fields(),
        "agrees": result.agrees,
        "comparison": result.comparison(),
    }


class ResultMixin:
    """Notebook and table views of a result defined by its ``to_dict()`` and ``__str__``."""

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - every result defines it
        raise NotImplementedError

    def _repr_markdown_(self) -> str:
        rows = [f"| {k} | {_cell(v)} |" for k, v in flatten(self.to_dict()).items()]
        return "\n".join([str(self), "", "| field | value |", "|---|---|", *rows])

    def to_frame(self) -> Any:
        """This result as a one-row :class:`pandas.DataFrame` (columns: :func:`flatten` of ``to_dict()``)."""
        return to_frame([self.to_dict()])
