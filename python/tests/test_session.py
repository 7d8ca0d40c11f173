"""InferenceSession: metadata, run, input handling, memory ownership, options."""
import glob
import os
import threading
import tracemalloc
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto

import onnxrun
from helpers import (MODELS, convt_model, convt_reference, d2s_model, d2s_reference,
                     example_model_dirs, read_pb)


def declared(value_infos, skip=()):
    """(name, ORT type string, shape) of ValueInfoProtos, read with onnx's parser."""
    out = []
    for vi in value_infos:
        if vi.name in skip:
            continue
        tt = vi.type.tensor_type
        shape = None
        if tt.HasField("shape"):
            shape = [d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param")
                     else None for d in tt.shape.dim]
        out.append((vi.name, "tensor(%s)" % TensorProto.DataType.Name(tt.elem_type).lower(), shape))
    return out


@pytest.mark.parametrize("model_dir", example_model_dirs(), ids=os.path.basename)
def test_inputs_and_outputs_are_the_declared_ones(model_dir):
    path = os.path.join(model_dir, "model.onnx")
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    sess = onnxrun.InferenceSession(path)
    got_in = [(a.name, a.type, a.shape) for a in sess.get_inputs()]
    got_out = [(a.name, a.type, a.shape) for a in sess.get_outputs()]
    assert got_in == declared(m.graph.input, skip=inits)
    want_out = declared(m.graph.output)
    assert [o[:2] for o in got_out] == [o[:2] for o in want_out]
    for (_, _, got), (_, _, want) in zip(got_out, want_out):
        if want is not None:  # declared dims; onnxrun may know more where the model is silent
            assert len(got) == len(want)
            assert all(w is None or g == w for g, w in zip(got, want)), (got, want)


def test_symbolic_dims_are_names():
    sess = onnxrun.InferenceSession(os.path.join(MODELS, "symbolic_batch", "model.onnx"))
    assert sess.get_inputs()[0].shape == ["N", 3, 8, 8]
    assert sess.get_outputs()[0].shape == ["N", 3, 32, 32]


def test_modelmeta_and_nodes_match_the_file():
    path = os.path.join(MODELS, "multi_use", "model.onnx")
    m = onnx.load(path)
    sess = onnxrun.InferenceSession(path)
    meta = sess.get_modelmeta()
    assert meta.ir_version == m.ir_version
    assert meta.opset_import == {o.domain: o.version for o in m.opset_import}
    nodes = sess.get_nodes()
    assert sorted((n.name, n.op_type, tuple(n.inputs), tuple(n.outputs)) for n in nodes) == sorted(
        (n.name, n.op_type, tuple(n.input), tuple(n.output)) for n in m.graph.node)
    # opset 22 picks ConvTranspose-22 and DepthToSpace-13 (models/README.md).
    assert {n.op_type: n.since_version for n in nodes} == {"ConvTranspose": 22, "DepthToSpace": 13}
    assert sess.get_value_info("t").shape == [1, 8, 10, 12]


def load_case(model_dir, k=0):
    sess = onnxrun.InferenceSession(os.path.join(model_dir, "model.onnx"))
    data = os.path.join(model_dir, "test_data_set_%d" % k)
    ins = [read_pb(os.path.join(data, "input_%d.pb" % i))[1] for i in range(len(sess.get_inputs()))]
    outs = [read_pb(p)[1] for p in sorted(glob.glob(os.path.join(data, "output_*.pb")))]
    return sess, dict(zip([i.name for i in sess.get_inputs()], ins)), outs


def test_output_names_select_and_order():
    sess, feed, expected = load_case(os.path.join(MODELS, "multi_use"))
    every = sess.run(None, feed)
    assert len(every) == 3
    for got, want in zip(every, expected):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-7)
    y2, t = sess.run(["y2", "t"], feed)
    np.testing.assert_array_equal(y2, every[2])
    np.testing.assert_array_equal(t, every[0])
    assert [a.shape for a in sess.run([], feed)] == [a.shape for a in every]


def test_unknown_output_name_raises_before_running():
    sess, feed, _ = load_case(os.path.join(MODELS, "multi_use"))
    with pytest.raises(onnxrun.InvalidArgument, match="no output named 'nope'") as e:
        sess.run(["y1", "nope"], feed)
    assert e.value.status == 1  # errors found by the binding carry a status too
    with pytest.raises(onnxrun.InvalidArgument):
        sess.run([3], feed)


def test_outputs_own_their_memory_and_survive_the_next_run():
    sess, feed, _ = load_case(os.path.join(MODELS, "upsampler"))
    (name, x), = feed.items()
    y1, = sess.run(None, {name: x})
    kept = y1.copy()
    assert y1.flags.owndata and y1.flags.writeable and y1.flags.c_contiguous
    y2, = sess.run(None, {name: x * 2 + 1})
    assert not np.array_equal(y2, kept)
    np.testing.assert_array_equal(y1, kept)
    y1[...] = 0  # writing a result must not disturb the session
    y3, = sess.run(None, {name: x * 2 + 1})
    np.testing.assert_array_equal(y3, y2)


def traced_peak(fn):
    """Peak bytes numpy allocated (tracemalloc sees numpy's data buffers) while fn ran."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = fn()
        return result, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_contiguous_inputs_are_not_copied_others_once():
    shape = (1, 16, 256, 256)  # 4 MiB of float32 in, 4 MiB out
    sess = onnxrun.InferenceSession(d2s_model(TensorProto.FLOAT, shape), threads=1)
    x = np.random.default_rng(1).standard_normal(shape, dtype=np.float32)
    mib = x.nbytes
    sess.run(None, {"x": x})
    (y,), peak = traced_peak(lambda: sess.run(None, {"x": x}))
    assert y.nbytes <= peak < y.nbytes + mib // 2, peak  # the output only: x was wrapped
    xf = np.asfortranarray(x)
    (yf,), peak = traced_peak(lambda: sess.run(None, {"x": xf}))
    assert y.nbytes + mib <= peak < y.nbytes + 2 * mib, peak  # one contiguous copy
    np.testing.assert_array_equal(yf, y)


def test_any_layout_gives_the_same_result():
    rng = np.random.default_rng(2)
    base = rng.standard_normal((2, 8, 6, 10)).astype(np.float32)
    sess = onnxrun.InferenceSession(d2s_model(TensorProto.FLOAT, ["N", 8, "H", "W"]))
    want = d2s_reference(base, 2, "DCR")
    big = rng.standard_normal((4, 8, 12, 10)).astype(np.float32)
    big[::2, :, ::2, :] = base
    unaligned = np.frombuffer(b"\0" + base.tobytes(), dtype=np.float32, offset=1).reshape(base.shape)
    assert not unaligned.flags.aligned
    layouts = {
        "fortran": np.asfortranarray(base),
        "transposed view": np.ascontiguousarray(base.transpose(3, 2, 1, 0)).transpose(3, 2, 1, 0),
        "strided slice": big[::2, :, ::2, :],
        "big-endian": base.astype(">f4"),
        "unaligned": unaligned,
        "read-only": np.frombuffer(base.tobytes(), dtype=np.float32).reshape(base.shape),
    }
    for what, x in layouts.items():
        np.testing.assert_array_equal(x, base)
        y, = sess.run(None, {"x": x})
        np.testing.assert_array_equal(y, want, err_msg=what)


def test_missing_input_is_reported_also_after_a_run():
    sess, feed, _ = load_case(os.path.join(MODELS, "weights_as_input"))
    with pytest.raises(onnxrun.InvalidInput, match="input 'w' is not set"):
        sess.run(None, {k: v for k, v in feed.items() if k != "w"})
    sess.run(None, feed)
    # The previous run's 'w' must not be reused (its array is gone with that run).
    with pytest.raises(onnxrun.InvalidInput, match="input 'w' is not set"):
        sess.run(None, {k: v for k, v in feed.items() if k != "w"})
    sess.run(None, feed)


def test_wrong_inputs_name_the_input():
    sess, feed, _ = load_case(os.path.join(MODELS, "upsampler"))
    x = feed["image"]
    with pytest.raises(onnxrun.InvalidInput, match="'image'") as e:
        sess.run(None, {"image": x.astype(np.float64)})
    assert isinstance(e.value, ValueError) and e.value.status == 6
    with pytest.raises(onnxrun.InvalidInput, match="'image'"):
        sess.run(None, {"image": x[:, :, :16]})
    with pytest.raises(onnxrun.InvalidArgument, match="no input named 'imag'"):
        sess.run(None, {"image": x, "imag": x})
    with pytest.raises(TypeError):
        sess.run(None, [x])
    with pytest.raises(TypeError):
        sess.run(None, {1: x})
    with pytest.raises(onnxrun.InvalidInput):
        sess.run(None, {"image": x.tolist()})  # a list becomes float64, the model wants float
    with pytest.raises(TypeError):
        sess.run(None, {"image": x}, run_options=object())
    y, = sess.run(None, feed)  # still usable
    assert y.shape == (1, 3, 128, 128)


def test_symbolic_batch_rebinds_between_runs():
    d = os.path.join(MODELS, "symbolic_batch")
    sess = onnxrun.InferenceSession(os.path.join(d, "model.onnx"))
    cases = []
    for k in (0, 1):
        x = read_pb(os.path.join(d, "test_data_set_%d" % k, "input_0.pb"))[1]
        y = read_pb(os.path.join(d, "test_data_set_%d" % k, "output_0.pb"))[1]
        cases.append((x, y))
    assert cases[0][0].shape[0] != cases[1][0].shape[0]
    for x, want in cases + cases:
        got, = sess.run(None, {"image": x})
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-7)


def test_initializer_override_lasts_one_run():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    sess = onnxrun.InferenceSession(convt_model([1, 2, 3, 3], w, b, stride=2, pad=1, w_is_input=True))
    assert [i.name for i in sess.get_inputs()] == ["x"]  # W has an initializer
    plain = convt_reference(x, w, b, stride=2, pad=1)
    over = convt_reference(x, w2, b, stride=2, pad=1)
    y, = sess.run(None, {"x": x})
    np.testing.assert_allclose(y, plain, rtol=1e-5, atol=1e-5)
    y, = sess.run(None, {"x": x, "W": w2})
    np.testing.assert_allclose(y, over, rtol=1e-5, atol=1e-5)
    y, = sess.run(None, {"x": x})  # back to the initializer
    np.testing.assert_allclose(y, plain, rtol=1e-5, atol=1e-5)
    assert not np.allclose(plain, over)
    with pytest.raises(onnxrun.InvalidArgument, match="no input named 'B2'"):
        sess.run(None, {"x": x, "B2": b})


def test_model_from_bytes_bytearray_memoryview_and_path():
    path = os.path.join(MODELS, "upsampler", "model.onnx")
    with open(path, "rb") as f:
        data = f.read()
    _, feed, _ = load_case(os.path.join(MODELS, "upsampler"))
    import pathlib
    want, = onnxrun.InferenceSession(path).run(None, feed)
    for source in (data, bytearray(data), memoryview(data), pathlib.Path(path)):
        got, = onnxrun.InferenceSession(source).run(None, feed)
        np.testing.assert_array_equal(got, want)


def test_external_data_from_bytes_needs_base_dir():
    d = os.path.join(MODELS, "external_data")
    with open(os.path.join(d, "model.onnx"), "rb") as f:
        data = f.read()
    with pytest.raises(onnxrun.Error, match="external"):
        onnxrun.InferenceSession(data)
    sess = onnxrun.InferenceSession(data, base_dir=d)
    x = read_pb(os.path.join(d, "test_data_set_0", "input_0.pb"))[1]
    y = read_pb(os.path.join(d, "test_data_set_0", "output_0.pb"))[1]
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], y, rtol=1e-3, atol=1e-7)


def test_threads_and_max_memory():
    path = os.path.join(MODELS, "upsampler", "model.onnx")
    _, feed, _ = load_case(os.path.join(MODELS, "upsampler"))
    one = onnxrun.InferenceSession(path, threads=1)
    two = onnxrun.InferenceSession(path, threads=2)
    assert (one.threads, two.threads) == (1, 2)
    assert onnxrun.InferenceSession(path).threads == (os.cpu_count() or 1)
    np.testing.assert_array_equal(one.run(None, feed)[0], two.run(None, feed)[0])  # bitwise
    with pytest.raises(onnxrun.InvalidArgument):
        onnxrun.InferenceSession(path, threads=0)
    with pytest.raises(TypeError):
        onnxrun.InferenceSession(path, threads=1.5)
    # The weights (~2 KiB) fit in 100 KiB, the run (intermediates + 192 KiB output) does not.
    with pytest.raises(onnxrun.LimitExceeded, match="weights|bytes"):
        onnxrun.InferenceSession(path, max_memory="1K")
    capped = onnxrun.InferenceSession(path, max_memory=100 * 1024)
    assert capped.max_memory == 100 * 1024
    with pytest.raises(onnxrun.LimitExceeded, match="memory limit") as e:
        capped.run(None, feed)
    assert e.value.status == 7
    assert onnxrun.InferenceSession(path, max_memory="1M").max_memory == 1 << 20
    for bad in ("12X", -1, 1 << 64, "99999999999999999999G"):
        with pytest.raises(ValueError):
            onnxrun.InferenceSession(path, max_memory=bad)


def test_ort_style_options_and_providers():
    path = os.path.join(MODELS, "upsampler", "model.onnx")
    opts = onnxrun.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = onnxrun.GraphOptimizationLevel.ORT_ENABLE_ALL
    with pytest.raises(AttributeError):
        opts.enable_cuda_graph = True
    sess = onnxrun.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    assert sess.threads == 1
    assert sess.get_session_options().intra_op_num_threads == 1
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert onnxrun.get_available_providers() == ["CPUExecutionProvider"]
    assert onnxrun.get_device() == "CPU"
    sess = onnxrun.InferenceSession(path, sess_options=opts,
                                    providers=[("CPUExecutionProvider", {})])
    assert sess.threads == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        onnxrun.InferenceSession(path, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert any("CUDAExecutionProvider" in str(w.message) for w in caught)


def test_one_session_shared_by_threads():
    sess, feed, _ = load_case(os.path.join(MODELS, "upsampler"))
    x = feed["image"]
    inputs = [x * (k + 1) for k in range(8)]
    want = [sess.run(None, {"image": xi})[0] for xi in inputs]
    errors = []

    def worker(k):
        try:
            for r in range(10):
                i = (k + r) % len(inputs)
                got, = sess.run(None, {"image": inputs[i]})
                if not np.array_equal(got, want[i]):
                    errors.append("thread %d run %d: wrong result" % (k, r))
        except Exception as e:  # reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_feed_conversion_may_run_the_same_session():
    sess, feed, _ = load_case(os.path.join(MODELS, "upsampler"))
    x = feed["image"]

    class Sneaky:
        def __array__(self, dtype=None):
            # Converting this feed runs the same session again: allowed (conversion happens
            # before the session is locked) and must not deadlock.
            sess.run(None, {"image": x})
            return x

    y, = sess.run(None, {"image": Sneaky()})
    np.testing.assert_array_equal(y, sess.run(None, {"image": x})[0])


def test_load_warnings_become_python_warnings():
    import onnx as _onnx
    m = _onnx.ModelProto()
    m.ParseFromString(d2s_model(TensorProto.FLOAT, [1, 4, 2, 2]))
    m.ir_version = 99
    with pytest.warns(onnxrun.ModelWarning, match="ir_version 99 is newer"):
        sess = onnxrun.InferenceSession(m.SerializeToString())
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], d2s_reference(x, 2, "DCR"))
