"""Shared test helpers: repository paths, small models built with onnx.helper, and plain numpy
references written from the ONNX operator spec (not from onnxrun's code)."""
import glob
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(REPO, "models")
TEST_DATA = os.path.join(REPO, "tests", "data")
BAD = os.path.join(REPO, "tests", "bad")
MALFORMED = os.path.join(REPO, "tests", "malformed")

# Every dtype onnxrun supports, as (numpy dtype or None, TensorProto type, ORT type string).
# bfloat16 has no numpy dtype (see test_dtypes.py); strings are object arrays.
NUMERIC_DTYPES = [
    (np.bool_, TensorProto.BOOL, "tensor(bool)"),
    (np.int8, TensorProto.INT8, "tensor(int8)"),
    (np.int16, TensorProto.INT16, "tensor(int16)"),
    (np.int32, TensorProto.INT32, "tensor(int32)"),
    (np.int64, TensorProto.INT64, "tensor(int64)"),
    (np.uint8, TensorProto.UINT8, "tensor(uint8)"),
    (np.uint16, TensorProto.UINT16, "tensor(uint16)"),
    (np.uint32, TensorProto.UINT32, "tensor(uint32)"),
    (np.uint64, TensorProto.UINT64, "tensor(uint64)"),
    (np.float16, TensorProto.FLOAT16, "tensor(float16)"),
    (np.float32, TensorProto.FLOAT, "tensor(float)"),
    (np.float64, TensorProto.DOUBLE, "tensor(double)"),
    (np.complex64, TensorProto.COMPLEX64, "tensor(complex64)"),
    (np.complex128, TensorProto.COMPLEX128, "tensor(complex128)"),
]


def example_model_dirs():
    """models/<name> and tests/data/<case>: folders holding model.onnx and test_data_set_*."""
    dirs = sorted(glob.glob(os.path.join(MODELS, "*", "model.onnx")))
    dirs += sorted(glob.glob(os.path.join(TEST_DATA, "*", "model.onnx")))
    return [os.path.dirname(d) for d in dirs]


def read_pb(path):
    """A .pb TensorProto read by onnx's own parser: (name, array)."""
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def random_array(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind == "f":
        return rng.standard_normal(size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(size=shape) + 1j * rng.standard_normal(size=shape)).astype(dtype)
    raise ValueError(dtype)


def d2s_model(elem_type, shape, blocksize=2, mode="DCR", opset=13, out_shape=None):
    """A one-node DepthToSpace model: input x (elem_type, shape) -> y."""
    attrs = {"blocksize": blocksize}
    if mode is not None:
        attrs["mode"] = mode
    node = helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", **attrs)
    graph = helper.make_graph([node], "d2s", [helper.make_tensor_value_info("x", elem_type, shape)],
                              [helper.make_tensor_value_info("y", elem_type, out_shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model.SerializeToString()


def d2s_reference(x, blocksize, mode):
    """DepthToSpace from the ONNX spec's reshape/transpose formula."""
    b, c, h, w = x.shape
    bs = blocksize
    if mode == "DCR":
        t = x.reshape(b, bs, bs, c // (bs * bs), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(b, c // (bs * bs), bs, bs, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(b, c // (bs * bs), h * bs, w * bs)


def convt_reference(x, w, bias=None, stride=1, pad=0):
    """2-D ConvTranspose (group 1, dilation 1, symmetric pads) as a direct scatter loop in
    float64, from the spec: out[n, m, i*s + k - p] += x[n, c, i] * w[c, m, k]."""
    n, c, h, wd = x.shape
    _, m, kh, kw = w.shape
    oh, ow = stride * (h - 1) + kh, stride * (wd - 1) + kw
    full = np.zeros((n, m, oh, ow))
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    for i in range(h):
        for j in range(wd):
            full[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum(
                "nc,cmyx->nmyx", x64[:, :, i, j], w64)
    out = full[:, :, pad:oh - pad, pad:ow - pad]
    if bias is not None:
        out = out + bias.astype(np.float64)[None, :, None, None]
    return out


def convt_model(x_shape, w, bias=None, stride=1, pad=0, w_is_input=False, opset=13):
    """ConvTranspose model with W (and B) as initializers; with w_is_input W is also a graph
    input (an overridable initializer)."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    inits = [numpy_helper.from_array(w.astype(np.float32), "W")]
    names = ["x", "W"]
    if bias is not None:
        inits.append(numpy_helper.from_array(bias.astype(np.float32), "B"))
        names.append("B")
    if w_is_input:
        inputs.append(helper.make_tensor_value_info("W", TensorProto.FLOAT, list(w.shape)))
    node = helper.make_node("ConvTranspose", names, ["y"], name="up", strides=[stride, stride],
                            pads=[pad] * 4)
    graph = helper.make_graph([node], "convt", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model.SerializeToString()
