"""The rest of ONNX Runtime's session API: model metadata, the opset policy, RunOptions
(terminate from another thread, onnxrun's deadline), OrtValue and IO binding over the
library's caller-owned outputs, SessionOptions and module settings, ONNX Runtime's exception
classes, parallel runs on one session, and pickled sessions in worker processes.

Expected values come from onnx (what the model file says), from numpy references or from a
plain run() of the same session, never from the code under test."""
import concurrent.futures
import gc
import json
import multiprocessing
import os
import pickle
import threading
import time
import tracemalloc
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxrun
from onnxrun.capi import onnxruntime_pybind11_state as ort_state
from helpers import BAD, MODELS, convt_model, convt_reference, d2s_model
import workers

UPSAMPLER = os.path.join(MODELS, "upsampler", "model.onnx")
SYMBOLIC = os.path.join(MODELS, "symbolic_batch", "model.onnx")


def described_model():
    """The symbolic_batch model with every metadata field set, as onnx writes them."""
    model = onnx.load(SYMBOLIC)
    model.producer_name = "exporter"
    model.producer_version = "4.5.6"
    model.domain = "org.example.vision"
    model.doc_string = "Upscales images.\nTwo lines."
    model.model_version = 12
    model.graph.name = "main_graph"
    model.graph.doc_string = "graph doc"
    onnx.helper.set_model_props(model, {"license": "MIT", "author": "Ann", "empty": ""})
    return model


def slow_convt(channels=64):
    """ConvTranspose with symbolic H, W: cheap on a small image, seconds on a large one."""
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((channels, channels, 3, 3)) * 0.05).astype(np.float32)
    return convt_model([1, channels, "H", "W"], w, pad=1)


# ---- metadata ----

def test_modelmeta_has_every_field_onnx_wrote():
    model = described_model()
    sess = onnxrun.InferenceSession(model.SerializeToString())
    meta = sess.get_modelmeta()
    assert meta.producer_name == model.producer_name
    assert meta.producer_version == model.producer_version
    assert meta.domain == model.domain
    assert meta.description == model.doc_string
    assert meta.version == model.model_version
    assert meta.graph_name == model.graph.name
    assert meta.graph_description == model.graph.doc_string
    assert meta.custom_metadata_map == {p.key: p.value for p in model.metadata_props}
    assert meta.ir_version == model.ir_version
    assert meta.opset_import == {o.domain: o.version for o in model.opset_import}


def test_modelmeta_of_a_model_without_metadata():
    model = onnx.load(SYMBOLIC)
    del model.metadata_props[:]
    model.ClearField("producer_name")
    model.graph.ClearField("doc_string")
    meta = onnxrun.InferenceSession(model.SerializeToString()).get_modelmeta()
    assert (meta.producer_name, meta.domain, meta.description, meta.version,
            meta.graph_description, meta.custom_metadata_map) == ("", "", "", 0, "", {})
    assert meta.graph_name == model.graph.name


def test_cli_info_prints_the_metadata(tmp_path):
    path = tmp_path / "described.onnx"
    onnx.save(described_model(), str(path))
    import subprocess
    out = subprocess.run([onnxrun.cli_path(), "--info", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert 'producer_name: "exporter"' in lines
    assert 'producer_version: "4.5.6"' in lines
    assert 'domain: "org.example.vision"' in lines
    assert "model_version: 12" in lines
    assert 'doc_string: "Upscales images.\\nTwo lines."' in lines
    assert 'graph_name: "main_graph"' in lines
    assert 'metadata: "license" = "MIT"' in lines and 'metadata: "empty" = ""' in lines


# ---- opset policy ----

def newer_opset_model(opset=99):
    return d2s_model(TensorProto.FLOAT, [1, 4, 2, 3], opset=opset)


def test_newer_opset_is_refused_by_default():
    with pytest.raises(onnxrun.Unsupported, match=r"opset 99 of ai\.onnx is newer than the newest "
                                                  r"onnxrun knows \(28\)") as e:
        onnxrun.InferenceSession(newer_opset_model())
    assert isinstance(e.value, ort_state.NotImplemented)
    # the newest known opset itself loads without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        onnxrun.InferenceSession(newer_opset_model(onnxrun._onnxrun.NEWEST_KNOWN_OPSET))


@pytest.mark.parametrize("how", ["kwarg", "attribute", "config"])
def test_newer_opset_opt_in(how):
    so = onnxrun.SessionOptions()
    kwargs = {}
    if how == "kwarg":
        kwargs["allow_newer_opset"] = True
    elif how == "attribute":
        so.allow_newer_opset = True
    else:
        so.add_session_config_entry("onnxrun.allow_newer_opset", "1")
    with pytest.warns(onnxrun.ModelWarning, match="opset 99 of ai.onnx"):
        sess = onnxrun.InferenceSession(newer_opset_model(), sess_options=so, **kwargs)
    x = np.arange(24, dtype=np.float32).reshape(1, 4, 2, 3)
    y, = sess.run(None, {"x": x})
    from helpers import d2s_reference
    np.testing.assert_array_equal(y, d2s_reference(x, 2, "DCR"))
    # the option travels with a pickled session
    with pytest.warns(onnxrun.ModelWarning):
        again = pickle.loads(pickle.dumps(sess))
    np.testing.assert_array_equal(again.run(None, {"x": x})[0], y)


def test_log_severity_silences_load_warnings():
    so = onnxrun.SessionOptions()
    so.allow_newer_opset = True
    so.log_severity_level = 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        onnxrun.InferenceSession(newer_opset_model(), sess_options=so)
    try:
        onnxrun.set_default_logger_severity(3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            onnxrun.InferenceSession(newer_opset_model(), allow_newer_opset=True)
        so.log_severity_level = 2  # the session's own level wins over the default
        with pytest.warns(onnxrun.ModelWarning):
            onnxrun.InferenceSession(newer_opset_model(), sess_options=so)
    finally:
        onnxrun.set_default_logger_severity(2)
    with pytest.warns(onnxrun.ModelWarning):
        onnxrun.InferenceSession(newer_opset_model(), allow_newer_opset=True)


# ---- RunOptions ----

def run_in_thread(sess, feed, ro):
    box = {}

    def target():
        try:
            box["result"] = sess.run(None, feed, ro)
        except BaseException as e:  # noqa: B902 - handed to the test thread
            box["error"] = e

    t = threading.Thread(target=target)
    t.start()
    return t, box


def test_terminate_from_another_thread_cancels_the_run():
    sess = onnxrun.InferenceSession(slow_convt(), threads=1)
    big = np.ones((1, 64, 768, 768), dtype=np.float32)
    small = np.random.default_rng(1).standard_normal((1, 64, 4, 5)).astype(np.float32)
    ro = onnxrun.RunOptions()
    t, box = run_in_thread(sess, {"x": big}, ro)
    # Wait until the big run is inside the library: a small run from here then finds the
    # pool's first library session busy and creates a second one (the big run takes its
    # session and registers with the RunOptions without letting go of the GIL, so a second
    # library session means it is running). Then terminate it from here.
    while sess._sess.pool_size < 2 and t.is_alive():
        sess.run(None, {"x": small})
    time.sleep(0.05)  # usually lets it reach the ConvTranspose; either way it must stop
    ro.terminate = True
    t.join()
    assert "error" in box, "the run finished before terminate (make the input larger)"
    e = box["error"]
    assert isinstance(e, onnxrun.Cancelled) and isinstance(e, ort_state.Fail)
    assert e.status == 9  # ONNXRUN_ERROR_CANCELLED
    # stopped inside the node, or (terminate landing between the binding's registration and
    # the library's first check) at the run's start
    assert "node 'up' (ConvTranspose)" in str(e) or "before it started" in str(e), str(e)
    # While terminate is set, runs are refused at once; cleared, the session works again.
    with pytest.raises(onnxrun.Cancelled, match="terminate"):
        sess.run(None, {"x": small}, ro)
    ro.terminate = False
    y, = sess.run(None, {"x": small}, ro)
    w = numpy_helper.to_array(onnx.load_from_string(slow_convt()).graph.initializer[0])
    np.testing.assert_allclose(y, convt_reference(small, w, pad=1), rtol=1e-4, atol=1e-4)


def test_terminate_stops_every_run_using_the_options():
    """Two runs in flight on one session with the same RunOptions (two library sessions in
    the pool while both run): one terminate stops both; a run with other options is not
    touched."""
    sess = onnxrun.InferenceSession(slow_convt(), threads=1)
    big = {"x": np.ones((1, 64, 768, 768), dtype=np.float32)}
    ro = onnxrun.RunOptions()
    runs = [run_in_thread(sess, big, ro) for _ in range(2)]
    while sess._sess.pool_size < 2 and all(t.is_alive() for t, _ in runs):
        time.sleep(0.01)
    ro.terminate = True
    for t, box in runs:
        t.join()
    assert all(isinstance(box.get("error"), onnxrun.Cancelled) for _, box in runs), runs
    other = onnxrun.RunOptions()
    y, = sess.run(None, {"x": np.ones((1, 64, 2, 2), dtype=np.float32)}, other)
    assert y.shape == (1, 64, 2, 2)


def test_onnxrun_deadline_stops_a_long_run():
    sess = onnxrun.InferenceSession(slow_convt(), threads=1)
    ro = onnxrun.RunOptions()
    ro.onnxrun_deadline_s = 0.01
    with pytest.raises(onnxrun.Cancelled, match="deadline"):
        sess.run(None, {"x": np.ones((1, 64, 768, 768), dtype=np.float32)}, ro)
    # a small run fits the budget; 0 removes it
    ro.onnxrun_deadline_s = 30
    sess.run(None, {"x": np.ones((1, 64, 2, 2), dtype=np.float32)}, ro)
    ro.onnxrun_deadline_s = 0
    assert ro.onnxrun_deadline_s == 0
    with pytest.raises(ValueError):
        ro.onnxrun_deadline_s = -1


def test_run_options_accepts_ort_attributes():
    ro = onnxrun.RunOptions()
    ro.log_severity_level = 3
    ro.log_verbosity_level = 1
    ro.logid = "request-7"
    ro.only_execute_path_to_fetches = True
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    assert ro.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    with pytest.raises(AttributeError):
        ro.not_an_option = 1
    with pytest.raises(TypeError):
        onnxrun.InferenceSession(UPSAMPLER).run(None, {}, object())


# ---- OrtValue and IO binding ----

def upsampler_case():
    sess = onnxrun.InferenceSession(UPSAMPLER, threads=1)
    x = np.random.default_rng(5).standard_normal(sess.get_inputs()[0].shape).astype(np.float32)
    want, = sess.run(None, {"image": x})
    return sess, x, want


def test_bound_output_is_written_into_the_callers_array_without_a_copy():
    sess, x, want = upsampler_case()
    out = np.full(want.shape, np.nan, dtype=np.float32)
    binding = sess.io_binding()
    binding.bind_cpu_input("image", x)
    binding.bind_output("upscaled", "cpu", 0, np.float32, list(out.shape), out.ctypes.data)
    sess.run_with_iobinding(binding)  # warm: the first bound run plans the session's memory
    out[...] = np.nan
    tracemalloc.start()
    try:
        sess.run_with_iobinding(binding)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(out, want)
    # no numpy buffer of the output's size was allocated: the library wrote into `out`
    assert peak < want.nbytes // 4, (peak, want.nbytes)
    got, = binding.get_outputs()
    assert got.data_ptr() == out.ctypes.data
    copies = binding.copy_outputs_to_cpu()
    np.testing.assert_array_equal(copies[0], want)
    assert copies[0].ctypes.data != out.ctypes.data
    # the array is unbound after the run: a plain run does not write there any more
    sess.run(None, {"image": np.zeros_like(x)})
    np.testing.assert_array_equal(out, want)


def test_bind_ortvalue_output_and_by_name():
    sess, x, want = upsampler_case()
    value = onnxrun.OrtValue.ortvalue_from_shape_and_type(want.shape, np.float32)
    assert value.shape() == list(want.shape) and value.data_type() == "tensor(float)"
    assert value.element_type() == TensorProto.FLOAT and value.device_name() == "cpu"
    binding = sess.io_binding()
    binding.bind_ortvalue_input("image", onnxrun.OrtValue.ortvalue_from_numpy(x))
    binding.bind_ortvalue_output("upscaled", value)
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(value.numpy(), want)
    assert binding.get_outputs()[0].data_ptr() == value.data_ptr()
    binding.clear_binding_outputs()
    binding.bind_output("upscaled")  # by name: onnxrun allocates it
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], want)
    with pytest.raises(onnxrun.InvalidArgument, match="no output is bound"):
        binding.clear_binding_outputs()
        sess.run_with_iobinding(binding)


def test_ortvalue_from_numpy_shares_memory_and_run_with_ort_values():
    sess, x, want = upsampler_case()
    value = onnxrun.OrtValue.ortvalue_from_numpy(x)
    assert value.data_ptr() == x.ctypes.data and np.shares_memory(value.numpy(), x)
    outs = sess.run_with_ort_values(["upscaled"], {"image": value})
    assert isinstance(outs[0], onnxrun.OrtValue)
    np.testing.assert_array_equal(outs[0].numpy(), want)
    strided = np.asfortranarray(x)
    assert onnxrun.OrtValue.ortvalue_from_numpy(strided).numpy().flags.c_contiguous
    with pytest.raises(onnxrun.InvalidArgument, match="CPU only"):
        onnxrun.OrtValue.ortvalue_from_numpy(x, "cuda", 0)


def test_bad_bound_outputs_are_refused_and_leave_the_session_usable():
    sess, x, want = upsampler_case()
    cases = [
        (np.zeros(want.shape, dtype=np.float64), "the model gives float, the bound array is double"),
        (np.zeros((1, 3, 64, 64), dtype=np.float32), "upscaled"),
        (np.zeros(want.shape[::-1], dtype=np.float32).T, "C-contiguous"),
    ]
    for arr, message in cases:
        binding = sess.io_binding()
        binding.bind_cpu_input("image", x)
        binding.bind_ortvalue_output("upscaled", onnxrun.OrtValue(arr))
        with pytest.raises(ort_state.InvalidArgument, match=message):
            sess.run_with_iobinding(binding)
    # an output bound over an input's memory is refused before anything runs
    d2s = onnxrun.InferenceSession(d2s_model(TensorProto.FLOAT, [1, 4, 2, 2]))
    buf = np.zeros(16, dtype=np.float32)
    binding = d2s.io_binding()
    binding.bind_cpu_input("x", buf.reshape(1, 4, 2, 2))
    binding.bind_ortvalue_output("y", onnxrun.OrtValue(buf.reshape(1, 1, 4, 4)))
    with pytest.raises(onnxrun.InvalidArgument, match="output 'y' is bound to memory that input 'x' also uses"):
        d2s.run_with_iobinding(binding)
    np.testing.assert_array_equal(sess.run(None, {"image": x})[0], want)


# ---- SessionOptions and module settings ----

ORT_SESSION_OPTIONS = {
    "intra_op_num_threads": 2, "inter_op_num_threads": 4,
    "graph_optimization_level": onnxrun.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "execution_mode": onnxrun.ExecutionMode.ORT_PARALLEL,
    "execution_order": onnxrun.ExecutionOrder.PRIORITY_BASED,
    "enable_mem_pattern": False, "enable_mem_reuse": False, "enable_cpu_mem_arena": False,
    "optimized_model_filepath": "", "log_severity_level": 3, "log_verbosity_level": 1,
    "logid": "svc", "use_deterministic_compute": True,
}


def test_every_ort_session_option_is_accepted():
    so = onnxrun.SessionOptions()
    for name, value in ORT_SESSION_OPTIONS.items():
        setattr(so, name, value)
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    with pytest.raises(onnxrun.InvalidArgument):
        so.get_session_config_entry("nope")
    with pytest.raises(AttributeError):
        so.not_an_option = 1
    so.disable_per_session_threads()
    with pytest.raises(onnxrun.Unsupported, match="libcustom.so"):
        so.register_custom_ops_library("libcustom.so")
    sess = onnxrun.InferenceSession(UPSAMPLER, so, ["CPUExecutionProvider"])
    assert sess.threads == 2
    back = sess.get_session_options()
    assert back.intra_op_num_threads == 2 and back.log_severity_level == 3
    assert back.enable_mem_pattern is False
    onnxrun.set_default_logger_verbosity(0)
    onnxrun.set_seed(1)
    onnxrun.disable_telemetry_events()
    onnxrun.enable_telemetry_events()
    assert onnxrun.get_version_string() == onnxrun.__version__
    assert onnxrun.__version__ in onnxrun.get_build_info()
    sess.set_providers(["CPUExecutionProvider"])
    sess.disable_fallback()
    assert sess.get_overridable_initializers() == []


def test_free_dimension_override_binds_a_symbolic_dim():
    so = onnxrun.SessionOptions()
    so.add_free_dimension_override_by_name("N", 2)
    sess = onnxrun.InferenceSession(SYMBOLIC, sess_options=so)
    sess.run(None, {"image": np.zeros((2, 3, 8, 8), dtype=np.float32)})
    with pytest.raises(onnxrun.InvalidInput, match="image"):
        sess.run(None, {"image": np.zeros((3, 3, 8, 8), dtype=np.float32)})


def test_end_profiling_writes_ort_trace_events(tmp_path):
    so = onnxrun.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    sess = onnxrun.InferenceSession(UPSAMPLER, sess_options=so, threads=1)
    x = np.zeros(sess.get_inputs()[0].shape, dtype=np.float32)
    for _ in range(3):
        sess.run(None, {"image": x})
    assert sess.get_profiling_start_time_ns() > 0
    path = sess.end_profiling()
    assert os.path.basename(path).startswith("prof_") and path.endswith(".json")
    with open(path) as f:
        events = json.load(f)
    runs = [e for e in events if e["cat"] == "Session" and e["name"] == "model_run"]
    nodes = [e for e in events if e["cat"] == "Node"]
    want_nodes = sess.get_nodes()
    assert len(runs) == 3
    assert len(nodes) == 3 * len(want_nodes)
    for i, e in enumerate(nodes):
        node = want_nodes[i % len(want_nodes)]
        assert e["name"] == node.name + "_kernel_time"
        assert e["args"]["op_name"] == node.op_type and e["ph"] == "X"
        assert e["dur"] >= 0 and e["ts"] >= 0
    for r in range(3):  # node events of a run lie inside it and add up to at most its length
        inside = nodes[r * len(want_nodes):(r + 1) * len(want_nodes)]
        assert sum(e["dur"] for e in inside) <= runs[r]["dur"] + len(inside)
        assert inside[0]["ts"] == runs[r]["ts"]
    assert runs[0]["ts"] <= runs[1]["ts"] <= runs[2]["ts"]
    # stopped: more runs add nothing, a second end_profiling writes nothing
    sess.run(None, {"image": x})
    assert sess.end_profiling() == ""


# ---- ONNX Runtime's exception classes ----

def test_ort_exception_classes_catch_what_ort_raises_them_for(tmp_path):
    sess, x, _ = upsampler_case()
    with pytest.raises(ort_state.InvalidArgument):  # wrong dtype
        sess.run(None, {"image": x.astype(np.float64)})
    with pytest.raises(onnxrun.InvalidArgument):  # the same through onnxrun's name
        sess.run(None, {"image": x.astype(np.float64)})
    with pytest.raises(ort_state.InvalidArgument):  # missing input
        sess.run(None, {})
    with pytest.raises(ort_state.InvalidArgument):  # unknown output
        sess.run(["nope"], {"image": x})
    with pytest.raises(ort_state.NoSuchFile):
        onnxrun.InferenceSession(str(tmp_path / "missing.onnx"))
    with pytest.raises(ort_state.InvalidProtobuf):
        onnxrun.InferenceSession(b"\x08\x07garbage" * 3)
    with pytest.raises(ort_state.InvalidGraph):
        onnxrun.InferenceSession(os.path.join(BAD, "cycle.onnx"))
    with pytest.raises(ort_state.NotImplemented):
        onnxrun.InferenceSession(os.path.join(BAD, "unsupported.onnx"))
    with pytest.raises(ort_state.Fail):
        onnxrun.InferenceSession(UPSAMPLER, max_memory=1024)


def test_ort_exception_hierarchy():
    parents = {
        ort_state.Fail: [onnxrun.OutOfMemory, onnxrun.InvalidModel, onnxrun.Unsupported, onnxrun.LimitExceeded,
                         onnxrun.Cancelled],
        ort_state.InvalidArgument: [onnxrun.InvalidArgument, onnxrun.InvalidInput],
        ort_state.NoSuchFile: [onnxrun.FileError],
        ort_state.InvalidProtobuf: [onnxrun.InvalidModel],
        ort_state.InvalidGraph: [onnxrun.InvalidModel, onnxrun.Unsupported],
        ort_state.NotImplemented: [onnxrun.Unsupported],
        ort_state.RuntimeException: [onnxrun.RuntimeFailure],
    }
    for ort_class, children in parents.items():
        for child in children:
            assert issubclass(child, ort_class), (child, ort_class)
            assert issubclass(child, onnxrun.Error)
    assert ort_state.InvalidArgument is onnxrun.InvalidArgument
    for name in ort_state.__all__:
        cls = getattr(ort_state, name)
        assert issubclass(cls, Exception) and cls.__name__ == name
        assert pickle.loads(pickle.dumps(cls)) is cls
    from onnxrun.capi._pybind_state import Fail
    assert Fail is ort_state.Fail


# ---- parallel runs on one session ----

def test_runs_on_one_session_overlap():
    """A second run completes while a first one, on the same session, is still running: the
    session created a second library session for it instead of making it wait."""
    sess = onnxrun.InferenceSession(slow_convt(), threads=1)
    ro = onnxrun.RunOptions()
    small = np.ones((1, 64, 3, 3), dtype=np.float32)
    t, box = run_in_thread(sess, {"x": np.ones((1, 64, 768, 768), dtype=np.float32)}, ro)
    overlapped = False
    for _ in range(500):
        sess.run(None, {"x": small})
        if sess._sess.pool_size == 2 and t.is_alive():
            overlapped = True
            break
        time.sleep(0.01)
    ro.terminate = True
    t.join()
    assert overlapped, "the second run never ran beside the first"


@pytest.mark.parametrize("threads", [1, 2])
def test_concurrent_runs_on_one_session_equal_sequential_runs(threads):
    sess = onnxrun.InferenceSession(SYMBOLIC, threads=threads)
    rng = np.random.default_rng(9)
    inputs = [rng.standard_normal((1 + i % 3, 3, 8, 8)).astype(np.float32) for i in range(16)]
    want = [sess.run(None, {"image": x})[0] for x in inputs]
    got = [None] * len(inputs)
    errors = []

    def worker(k):
        try:
            for rep in range(5):
                for i in range(k, len(inputs), 4):
                    y, = sess.run(None, {"image": inputs[i]})
                    if rep == 0:
                        got[i] = y
                    elif not np.array_equal(y, got[i]):
                        errors.append((k, i, rep))
        except BaseException as e:  # noqa: B902
            errors.append(e)

    threads_ = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads_:
        t.start()
    for t in threads_:
        t.join()
    assert not errors
    for i in range(len(inputs)):
        assert np.array_equal(got[i], want[i]), i  # bitwise


# ---- pickling and worker processes ----

def test_pickle_round_trip_keeps_model_and_options():
    so = onnxrun.SessionOptions()
    so.log_severity_level = 3
    so.enable_mem_pattern = False
    for source in (UPSAMPLER, open(UPSAMPLER, "rb").read()):
        sess = onnxrun.InferenceSession(source, threads=1, max_memory="64M", sess_options=so)
        for protocol in (2, pickle.HIGHEST_PROTOCOL):
            again = pickle.loads(pickle.dumps(sess, protocol=protocol))
            assert workers.session_facts(again) == workers.session_facts(sess)
            assert again.max_memory == 64 << 20
        x = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype(np.float32)
        np.testing.assert_array_equal(again.run(None, {"image": x})[0], sess.run(None, {"image": x})[0])


def test_pickle_protocol_5_out_of_band_does_not_copy_the_model():
    data = open(UPSAMPLER, "rb").read()
    sess = onnxrun.InferenceSession(data)
    buffers = []
    stream = pickle.dumps(sess, protocol=5, buffer_callback=buffers.append)
    assert len(stream) < 1024 < len(data)  # the model travelled out of band
    assert len(buffers) == 1 and bytes(buffers[0].raw()) == data
    again = pickle.loads(stream, buffers=buffers)
    assert again.get_modelmeta().graph_name == "upsampler"


def sample_images(n=6):
    rng = np.random.default_rng(4)
    return [rng.standard_normal((1, 3, 32, 32)).astype(np.float32) for _ in range(n)]


def test_multiprocessing_pool_maps_a_session():
    sess = onnxrun.InferenceSession(UPSAMPLER, threads=1)
    images = sample_images()
    want = [sess.run(None, {"image": x})[0] for x in images]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        got = pool.map(workers.run_session, [(sess, "image", x) for x in images])
    for g, w in zip(got, want):
        assert np.array_equal(g, w)


def test_process_pool_executor_maps_a_session():
    sess = onnxrun.InferenceSession(open(UPSAMPLER, "rb").read(), threads=1)
    images = sample_images()
    want = [sess.run(None, {"image": x})[0] for x in images]
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as ex:
        got = list(ex.map(workers.run_session, [(sess, "image", x) for x in images]))
        facts = ex.submit(workers.session_facts, sess).result()
    assert facts == workers.session_facts(sess)
    for g, w in zip(got, want):
        assert np.array_equal(g, w)
    gc.collect()
