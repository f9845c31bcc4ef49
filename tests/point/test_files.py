"""Weight files (ag_attention._point.files); .npz and .safetensors are tested through Network.load in
test_weights.py and test_safetensors.py."""

import numpy as np

from ag_attention._point.files import tensor_to_numpy


class _BFloat16:
    """What tensor_to_numpy uses of a torch tensor in bf16: numpy() raises, float() is exact."""

    def __init__(self, values):
        self.values = np.asarray(values, np.float32)

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        raise TypeError("Got unsupported ScalarType BFloat16")

    def float(self):
        return _Float32(self.values)


class _Float32(_BFloat16):
    def numpy(self):
        return self.values


def test_a_tensor_numpy_lacks_is_read_through_float32():
    assert tensor_to_numpy(_BFloat16([1.5, -2.0])).tolist() == [1.5, -2.0]
    assert tensor_to_numpy(_Float32([0.25])).dtype == np.float32
