"""Every dtype the C library supports goes in and comes out of a run unchanged (DepthToSpace
only moves elements, so the expected output is the spec's reshape/transpose of the input)."""
import numpy as np
import pytest
from onnx import TensorProto

import onnxrun
from helpers import NUMERIC_DTYPES, d2s_model, d2s_reference, random_array

SHAPE = (2, 8, 3, 5)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("np_dtype,elem_type,ort_type", NUMERIC_DTYPES,
                         ids=[str(np.dtype(d[0])) for d in NUMERIC_DTYPES])
def test_numeric_dtype_round_trip(np_dtype, elem_type, ort_type, mode):
    rng = np.random.default_rng(elem_type)
    x = random_array(rng, np_dtype, SHAPE)
    if np.dtype(np_dtype).kind in "fc":
        x.flat[:3] = [np.nan, np.inf, -0.0]  # bit patterns must survive too
    sess = onnxrun.InferenceSession(d2s_model(elem_type, list(SHAPE), 2, mode))
    assert sess.get_inputs()[0].type == ort_type
    assert sess.get_outputs()[0].type == ort_type
    y, = sess.run(None, {"x": x})
    want = d2s_reference(x, 2, mode)
    assert y.dtype == np.dtype(np_dtype)
    assert y.shape == want.shape
    np.testing.assert_array_equal(y.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


def test_string_tensors():
    items = ["", "a", "héllo", "日本", "nul\x00inside", "x" * 1000, "z", "q"] * 2
    x = np.array(items, dtype=object).reshape(1, 16, 1, 1)
    sess = onnxrun.InferenceSession(d2s_model(TensorProto.STRING, [1, 16, 1, 1], 2, "CRD"))
    assert sess.get_inputs()[0].type == "tensor(string)"
    y, = sess.run(None, {"x": x})
    want = d2s_reference(x, 2, "CRD")
    assert y.dtype == object and y.shape == want.shape
    assert y.tolist() == want.tolist()
    # str ('U') and bytes ('S') arrays and bytes objects are accepted too; results are str.
    y, = sess.run(None, {"x": np.array(items).reshape(1, 16, 1, 1)})
    assert y.tolist() == want.tolist()
    as_bytes = np.array([s.encode() for s in items], dtype=object).reshape(1, 16, 1, 1)
    y, = sess.run(None, {"x": as_bytes})
    assert y.tolist() == want.tolist()
    # Elements that are not UTF-8 come back as bytes, unchanged.
    raw = np.array([b"\xff\xfe"] + [b"ok"] * 15, dtype=object).reshape(1, 16, 1, 1)
    y, = sess.run(None, {"x": raw})
    assert y.ravel().tolist().count(b"\xff\xfe") == 1
    with pytest.raises(onnxrun.InvalidInput, match="element 3 of a string tensor is int"):
        bad = np.array(items, dtype=object)
        bad[3] = 7
        sess.run(None, {"x": bad.reshape(1, 16, 1, 1)})


def test_bfloat16_as_uint16_bits():
    rng = np.random.default_rng(16)
    bits = rng.integers(0, 1 << 16, size=SHAPE, dtype=np.uint16)
    sess = onnxrun.InferenceSession(d2s_model(TensorProto.BFLOAT16, list(SHAPE), 2, "DCR"))
    assert sess.get_inputs()[0].type == "tensor(bfloat16)"
    y, = sess.run(None, {"x": bits})
    want = d2s_reference(bits, 2, "DCR")
    if onnxrun.bfloat16 is None:
        assert y.dtype == np.uint16
        np.testing.assert_array_equal(y, want)
    else:
        np.testing.assert_array_equal(y.view(np.uint16), want)
    # uint16 stands for bfloat16 only where the model declares bfloat16.
    f16 = onnxrun.InferenceSession(d2s_model(TensorProto.FLOAT16, list(SHAPE), 2, "DCR"))
    with pytest.raises(onnxrun.InvalidInput, match="'x'"):
        f16.run(None, {"x": bits})


def test_registered_bfloat16_dtype():
    """The path ml_dtypes takes (a registered 2-byte dtype goes in and comes out as bfloat16),
    exercised with a stand-in dtype so that it is tested where ml_dtypes is not installed."""
    stand_in = np.dtype([("bits", "<u2")])
    rng = np.random.default_rng(17)
    bits = rng.integers(0, 1 << 16, size=SHAPE, dtype=np.uint16)
    sess = onnxrun.InferenceSession(d2s_model(TensorProto.BFLOAT16, list(SHAPE), 2, "CRD"))
    onnxrun._onnxrun.set_bfloat16_dtype(stand_in)
    try:
        y, = sess.run(None, {"x": bits.view(stand_in).reshape(SHAPE)})
        assert y.dtype == stand_in
        np.testing.assert_array_equal(y.view(np.uint16).reshape(y.shape), d2s_reference(bits, 2, "CRD"))
        with pytest.raises(ValueError):
            onnxrun._onnxrun.set_bfloat16_dtype(np.float32)
    finally:
        onnxrun._onnxrun.set_bfloat16_dtype(onnxrun.bfloat16)
    y, = sess.run(None, {"x": bits})
    assert y.dtype == (onnxrun.bfloat16 or np.dtype(np.uint16))


@pytest.mark.parametrize("dtype", ["datetime64[s]", "timedelta64[s]", np.longdouble,
                                   np.dtype([("a", "<f4"), ("b", "<i4")])], ids=str)
def test_numpy_dtypes_without_onnx_type(dtype):
    sess = onnxrun.InferenceSession(d2s_model(TensorProto.FLOAT, list(SHAPE)))
    x = np.zeros(SHAPE, dtype=dtype)
    with pytest.raises(onnxrun.InvalidInput, match="no ONNX tensor type"):
        sess.run(None, {"x": x})


def test_empty_and_symbolic_shapes():
    sess = onnxrun.InferenceSession(d2s_model(TensorProto.INT32, ["N", 8, "H", "W"]))
    for shape in [(0, 8, 3, 5), (1, 8, 0, 5), (3, 8, 1, 1)]:
        x = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
        y, = sess.run(None, {"x": x})
        assert y.shape == (shape[0], 2, shape[2] * 2, shape[3] * 2)
        np.testing.assert_array_equal(y, d2s_reference(x, 2, "DCR"))


def test_rank_mismatch_and_rank_limit():
    sess = onnxrun.InferenceSession(d2s_model(TensorProto.FLOAT, ["N", 8, "H", "W"]))
    with pytest.raises(onnxrun.InvalidInput, match="'x'"):
        sess.run(None, {"x": np.zeros((8, 3, 5), np.float32)})
    with pytest.raises(onnxrun.InvalidInput, match="'x'"):
        sess.run(None, {"x": np.float32(1)})
    with pytest.raises(onnxrun.Error):
        sess.run(None, {"x": np.zeros((1,) * 13, np.float32)})  # above ONNXRUN_MAX_RANK
