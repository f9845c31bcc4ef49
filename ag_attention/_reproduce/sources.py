"""Where an expected value comes from: one label per row (or per table) of every table of expected values.

An adversarial review (issue 46, item 5) found tables whose "outside" numbers were the package's own code (a
formula evaluated by us, our own earlier counts).  A :class:`Source` says which of four kinds a value is, and
where it is from:

* ``outside``: a published number, cited with its location (paper and table or section, a repository at a commit
  and its file);
* ``independent``: computed by another method or tool, named (Macaulay2's Schubert2, msolve on another system);
* ``theorem``: a published formula or theorem, evaluated by the package's own code (a check of our count against
  our evaluation of their statement, not against a number they printed);
* ``regression``: the package's own earlier value (it guards against a change, it confirms nothing).

Reports print :attr:`Source.label` in a "source" column, and their JSON keeps :meth:`Source.to_dict`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from .._errors import InvalidArgumentError

__all__ = ["Kind", "Source"]


class Kind(enum.Enum):
    """The four kinds of expected value, weakest evidence last."""

    OUTSIDE = "outside"
    INDEPENDENT = "independent"
    THEOREM = "theorem"
    REGRESSION = "regression"


@dataclass(frozen=True)
class Source:
    """An expected value's kind and its citation (where it was published, which tool, which formula or run)."""

    kind: Kind
    citation: str

    def __post_init__(self) -> None:
        if not isinstance(self.kind, Kind):
            raise InvalidArgumentError(f"Source.kind must be a Kind, not {self.kind!r}")
        if not self.citation.strip():
            raise InvalidArgumentError(
                "a Source needs a citation: where the value was published, or how it was computed"
            )

    @property
    def label(self) -> str:
        """``"kind: citation"``, as the tables print it."""
        return f"{self.kind.value}: {self.citation}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "citation": self.citation}

    @classmethod
    def outside(cls, citation: str) -> Source:
        return cls(Kind.OUTSIDE, citation)

    @classmethod
    def independent(cls, citation: str) -> Source:
        return cls(Kind.INDEPENDENT, citation)

    @classmethod
    def theorem(cls, citation: str) -> Source:
        return cls(Kind.THEOREM, citation)

    @classmethod
    def regression(cls, citation: str) -> Source:
        return cls(Kind.REGRESSION, citation)
