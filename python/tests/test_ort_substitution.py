"""Code written for ONNX Runtime runs unchanged with onnxrun substituted for it.

Everything below the import line is written the way a test suite for onnxruntime is: only
onnxruntime's API (InferenceSession with sess_options and providers, SessionOptions and its
tuning attributes, GraphOptimizationLevel, ExecutionMode, get_inputs/get_outputs with
.name/.type/.shape, run, get_modelmeta, RunOptions, io_binding, OrtValue,
run_with_ort_values, ort.capi.onnxruntime_pybind11_state's exception classes, threads on one
session) plus onnx and numpy to read the test data. Two tests use what onnxrun adds and
ONNX Runtime lacks, still through `ort`: the opset opt-in and sessions sent to a process
pool (ONNX Runtime sessions do not pickle). The one change is the import: `import onnxruntime as ort`
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


# ---- the rest of ONNX Runtime's session API, still only through `ort` ----

UPSAMPLER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "models", "upsampler", "model.onnx")


def test_metadata_and_session_options_tuning():
    ort.set_default_logger_severity(3)
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.enable_mem_pattern = False
        so.enable_cpu_mem_arena = False
        so.enable_mem_reuse = True
        so.use_deterministic_compute = True
        so.log_severity_level = 3
        so.log_verbosity_level = 0
        so.logid = "test"
        so.optimized_model_filepath = ""
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        sess = ort.InferenceSession(UPSAMPLER, sess_options=so, providers=["CPUExecutionProvider"])
    finally:
        ort.set_default_logger_severity(2)
    meta = sess.get_modelmeta()
    model = onnx.load(UPSAMPLER)
    assert meta.producer_name == model.producer_name
    assert meta.graph_name == model.graph.name
    assert meta.graph_description == model.graph.doc_string
    assert meta.domain == model.domain and meta.description == model.doc_string
    assert meta.version == model.model_version
    assert meta.custom_metadata_map == {p.key: p.value for p in model.metadata_props}
    assert sess.get_providers() == ["CPUExecutionProvider"]


def test_run_options_io_binding_and_ort_values():
    sess = ort.InferenceSession(UPSAMPLER, providers=["CPUExecutionProvider"])
    inp, out = sess.get_inputs()[0], sess.get_outputs()[0]
    x = np.random.default_rng(1).standard_normal(inp.shape).astype(np.float32)
    ro = ort.RunOptions()
    ro.log_severity_level = 3
    y = sess.run([out.name], {inp.name: x}, ro)[0]
    y_out = ort.OrtValue.ortvalue_from_shape_and_type(y.shape, np.float32, "cpu", 0)
    binding = sess.io_binding()
    binding.bind_ortvalue_input(inp.name, ort.OrtValue.ortvalue_from_numpy(x, "cpu", 0))
    binding.bind_ortvalue_output(out.name, y_out)
    sess.run_with_iobinding(binding, ro)
    np.testing.assert_array_equal(y_out.numpy(), y)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], y)
    vals = sess.run_with_ort_values([out.name], {inp.name: ort.OrtValue.ortvalue_from_numpy(x)})
    np.testing.assert_array_equal(vals[0].numpy(), y)
    ro.terminate = True
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.Fail):
        sess.run(None, {inp.name: x}, ro)


def test_ort_exception_classes():
    state = ort.capi.onnxruntime_pybind11_state
    sess = ort.InferenceSession(UPSAMPLER, providers=["CPUExecutionProvider"])
    x = np.zeros(sess.get_inputs()[0].shape, dtype=np.float64)
    with pytest.raises(state.InvalidArgument):
        sess.run(None, {sess.get_inputs()[0].name: x})
    with pytest.raises(state.NoSuchFile):
        ort.InferenceSession("/nonexistent/model.onnx", providers=["CPUExecutionProvider"])
    with pytest.raises((state.InvalidProtobuf, state.Fail)):
        ort.InferenceSession(b"not a model", providers=["CPUExecutionProvider"])


def test_threads_on_one_session():
    import threading
    sess = ort.InferenceSession(UPSAMPLER, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    xs = [np.full(inp.shape, i, dtype=np.float32) for i in range(4)]
    want = [sess.run(None, {inp.name: x})[0] for x in xs]
    got = [None] * 4

    def work(i):
        got[i] = sess.run(None, {inp.name: xs[i]})[0]

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for g, w in zip(got, want):
        assert np.array_equal(g, w)


def test_the_ort_style_example_script():
    """python/examples/ort_style.py: an ONNX Runtime script with only its imports changed
    (metadata, SessionOptions tuning, RunOptions, IO binding, exception classes, threads on
    one session, a process pool), run as a script."""
    import subprocess
    import sys
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples",
                        "ort_style.py")
    proc = subprocess.run([sys.executable, path, UPSAMPLER], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    result = dict(line.split(": ", 1) for line in proc.stdout.splitlines())
    assert result["graph_name"] == "upsampler" and result["output_shape"] == "[1, 3, 128, 128]"
    assert result["binding_equal"] == result["ort_values_equal"] == "True"
    assert result["wrong_dtype"] == "InvalidArgument" and result["terminated"] == "Fail"
    assert result["threads_equal"] == result["pool_equal"] == "True"


def test_newer_opset_refused_and_allowed():
    from onnx import TensorProto, helper
    node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 1, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 99)])
    model.ir_version = 8
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.Fail, match="opset 99"):
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    so = ort.SessionOptions()
    so.add_session_config_entry("onnxrun.allow_newer_opset", "1")
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, ["CPUExecutionProvider"])
    y, = sess.run(None, {"x": np.arange(4, dtype=np.float32).reshape(1, 4, 1, 1)})
    np.testing.assert_array_equal(y.ravel(), [0, 1, 2, 3])


def test_sessions_go_to_a_process_pool():
    import concurrent.futures
    import multiprocessing
    import pickle
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # workers.py for the workers
    import workers
    sess = ort.InferenceSession(UPSAMPLER, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(4).standard_normal(sess.get_inputs()[0].shape).astype(np.float32)
    want = sess.run(None, {"image": x})[0]
    assert np.array_equal(pickle.loads(pickle.dumps(sess)).run(None, {"image": x})[0], want)
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as pool:
        got = list(pool.map(workers.run_session, [(sess, "image", x), (sess, "image", x)]))
    assert all(np.array_equal(g, want) for g in got)
