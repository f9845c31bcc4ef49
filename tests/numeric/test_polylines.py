"""Paths along polylines of parameters, many jobs in one batch (ag_attention._numeric.polylines)."""

import numpy as np
import pytest

from ag_attention._errors import InvalidArgumentError
from ag_attention._numeric.polylines import CONVERGED, Polylines, join_ends, track_job
from ag_attention._numeric.tracker import TrackerOptions
from tests.numeric.test_homotopy import Roots

#: a loop around 0 (p0 -> q1 -> q2 -> p0): the square roots of p0 = 1 change places
LOOP = np.array([[[1.0 + 0j], [-1.0 + 1j], [-1.0 - 1j], [1.0 + 0j]]])
#: a segment from 1 to 4: each square root goes to its double
SEGMENT = np.array([[[1.0 + 0j], [4.0 + 0j]]])


def test_a_job_along_a_loop_permutes_the_roots():
    ends = track_job(Roots(2), 7, np.array([[1.0 + 0j], [-1.0 + 0j]]), None, LOOP, np.array([0, 0]), TrackerOptions())
    assert ends.job == 7 and list(ends.index) == [0, 1] and ends.ok.all() and (ends.last < CONVERGED).all()
    assert np.allclose(ends.z[:, 0], [-1, 1], atol=1e-8) and ends.seconds > 0


def test_jobs_share_one_batch_and_their_ends_come_back_by_job():
    P = Polylines(Roots(2))
    P.add(1, np.array([[1.0 + 0j], [-1.0 + 0j]]), None, LOOP, np.array([0, 0]))
    P.add(2, np.array([[1.0 + 0j]]), None, SEGMENT, np.array([0]))
    assert len(P) == 3
    with pytest.raises(InvalidArgumentError, match="job 2 is already under way"):
        P.add(2, np.array([[1.0 + 0j]]), None, SEGMENT, np.array([0]))
    parts = {1: [], 2: []}
    while len(P):
        for e in P.step():
            parts[e.job].append(e)
    loop, segment = join_ends(1, parts[1], 0), join_ends(2, parts[2], 0)
    assert list(loop.index) == [0, 1] and np.allclose(loop.z[:, 0], [-1, 1], atol=1e-8)
    assert np.allclose(segment.z[:, 0], [2], atol=1e-8) and join_ends(3, [], 0).index.size == 0


def test_a_job_out_of_time_returns_its_paths_as_failed():
    ends = track_job(
        Roots(2), 0, np.array([[1.0 + 0j]]), None, LOOP, np.array([0]), TrackerOptions(), wall_deadline=0.0
    )
    assert not ends.ok.any() and list(ends.reason) == ["time limit"]
