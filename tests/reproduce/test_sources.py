"""Where an expected value comes from (ag_attention._reproduce.sources): four kinds, each with its citation."""

import pytest

from ag_attention._errors import InvalidArgumentError
from ag_attention._reproduce.sources import Kind, Source


def test_the_four_kinds_and_their_labels():
    assert [k.value for k in Kind] == ["outside", "independent", "theorem", "regression"]
    s = Source.outside("Bharadwaj, Hoşten, arXiv:2301.12651, raw outputs at eb15bfd")
    assert s.kind is Kind.OUTSIDE and s.label == "outside: Bharadwaj, Hoşten, arXiv:2301.12651, raw outputs at eb15bfd"
    assert s.to_dict() == {"kind": "outside", "citation": s.citation}
    assert Source.independent("msolve").kind is Kind.INDEPENDENT
    assert Source.theorem("DHOST Thm. 5.8").label == "theorem: DHOST Thm. 5.8"
    assert Source.regression("an earlier run").kind is Kind.REGRESSION


@pytest.mark.parametrize("kind, citation", [("outside", "a paper"), (Kind.THEOREM, " ")])
def test_a_source_needs_a_kind_and_a_citation(kind, citation):
    with pytest.raises(InvalidArgumentError):
        Source(kind, citation)
