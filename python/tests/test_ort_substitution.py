"""Code written for ONNX Runtime runs unchanged with onnxrun substituted for it.

Everything below the import line is written the way a test suite for onnxruntime is: only
onnxruntime's API (InferenceSession with sess_options and providers, SessionOptions,
GraphOptimizationLevel, get_inputs/get_outputs with .name/.type/.shape, run) plus onnx and
numpy to read the test data. The one change is the import: `import onnxruntime as ort`
became `import onnxrun as ort`. (ONNX Runtime cannot be installed here, so the same code is
not also run against it; it uses nothing that ONNX Runtime's Python API does not document.)
"""
import glob
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import onnxrun as ort  # was: import onnxruntime as ort

from helpers import example_model_dirs

ORT_TO_NUMPY = {
    "tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
    "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int8)": np.int8,
    "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_,
}


def make_session(model_path, threads=None):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        so.intra_op_num_threads = threads
    return ort.InferenceSession(model_path, sess_options=so, providers=["CPUExecutionProvider"])


def check_model_dir(model_dir):
    """The usual loop over an ONNX test-layout folder: feed input_<i>.pb to the i-th input,
    compare every output with output_<i>.pb."""
    sess = make_session(os.path.join(model_dir, "model.onnx"))
    inputs = sess.get_inputs()
    output_names = [o.name for o in sess.get_outputs()]
    data_dirs = sorted(glob.glob(os.path.join(model_dir, "test_data_set_*")))
    assert data_dirs
    for data_dir in data_dirs:
        feeds = {}
        for i, inp in enumerate(inputs):
            arr = numpy_helper.to_array(onnx.load_tensor(os.path.join(data_dir, "input_%d.pb" % i)))
            assert arr.dtype == ORT_TO_NUMPY[inp.type], (inp.name, arr.dtype, inp.type)
            assert len(arr.shape) == len(inp.shape)
            for got, declared in zip(arr.shape, inp.shape):
                assert declared is None or isinstance(declared, str) or declared == got
            feeds[inp.name] = arr
        results = sess.run(output_names, feeds)
        assert len(results) == len(output_names)
        for i, (out, got) in enumerate(zip(sess.get_outputs(), results)):
            want = numpy_helper.to_array(onnx.load_tensor(os.path.join(data_dir, "output_%d.pb" % i)))
            assert isinstance(got, np.ndarray)
            assert got.dtype == ORT_TO_NUMPY[out.type]
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-7, err_msg=out.name)


@pytest.mark.parametrize("model_dir", example_model_dirs(), ids=os.path.basename)
def test_onnx_test_layout_loop(model_dir):
    check_model_dir(model_dir)


def test_dynamic_batch_with_first_output_idiom():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "models", "symbolic_batch", "model.onnx")
    sess = make_session(path, threads=1)
    inp = sess.get_inputs()[0]
    assert isinstance(inp.shape[0], str)  # a dynamic batch axis shows up as its name
    rng = np.random.default_rng(0)
    single = rng.random([1] + inp.shape[1:], dtype=np.float32)
    batch = np.concatenate([single, rng.random([3] + inp.shape[1:], dtype=np.float32)])
    y1 = sess.run(None, {inp.name: single})[0]
    y4 = sess.run(None, {inp.name: batch})[0]
    assert y4.shape[0] == 4 and y4.shape[1:] == y1.shape[1:]
    np.testing.assert_allclose(y4[:1], y1, rtol=1e-6, atol=1e-7)  # batch items are independent


def test_bytes_model_and_error_handling():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "models", "upsampler", "model.onnx")
    model = onnx.load(path)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    shape = sess.get_inputs()[0].shape
    x = np.zeros(shape, dtype=np.float32)
    (y,) = sess.run(None, {name: x})
    assert y.shape == tuple(sess.get_outputs()[0].shape)
    # A wrong dtype is rejected with an exception, as onnxruntime does (its own classes differ:
    # code catching a broad Exception, as ORT users do, works for both).
    with pytest.raises(Exception):
        sess.run(None, {name: x.astype(np.float64)})
