import os

import numpy as np
import pytest

os.environ.setdefault("HOME", "/tmp")


@pytest.fixture
def rng():
    return np.random.default_rng(20241122)
