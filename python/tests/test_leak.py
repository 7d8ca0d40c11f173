"""10,000 session create/run/free cycles keep the process RSS flat.

Each cycle loads a model from bytes (every 7th from its path), runs it, reads the outputs and
drops the session; every 5th uses 2 threads (a thread pool per session), every 10th also
meets a failing load and a failing run. A leak of 100 bytes per cycle would add ~1 MiB."""
import gc
import os

import numpy as np
import pytest
from onnx import TensorProto

import onnxrun
from helpers import BAD, MODELS, d2s_model

CYCLES = 10_000
WARMUP = 1_000
LIMIT = 1 << 20  # growth allowed after the warm-up (allocator and interpreter noise)


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_rss_stays_flat_over_10000_cycles(report):
    path = os.path.join(MODELS, "multi_use", "model.onnx")
    with open(path, "rb") as f:
        data = f.read()
    with open(os.path.join(BAD, "cycle.onnx"), "rb") as f:
        bad = f.read()
    strings = d2s_model(TensorProto.STRING, [1, 4, 1, 1])
    x = np.random.default_rng(8).standard_normal((1, 4, 5, 6)).astype(np.float32)
    s = np.array(["a", "bb", "ccc", "dddd"], dtype=object).reshape(1, 4, 1, 1)

    def cycle(i):
        sess = onnxrun.InferenceSession(path if i % 7 == 0 else data, threads=2 if i % 5 == 0 else 1)
        outs = sess.run(None, {"x": x})
        assert len(outs) == 3
        if i % 10 == 0:
            with pytest.raises(onnxrun.InvalidModel):
                onnxrun.InferenceSession(bad)
            with pytest.raises(onnxrun.InvalidInput):
                sess.run(None, {"x": x[:, :2]})
            out, = onnxrun.InferenceSession(strings).run(None, {"x": s})
            assert out.shape == (1, 1, 2, 2)

    for i in range(WARMUP):
        cycle(i)
    gc.collect()
    start = rss()
    samples = []
    for i in range(CYCLES):
        cycle(i)
        if (i + 1) % 2000 == 0:
            gc.collect()
            samples.append(rss() - start)
    report("RSS over %d create/run/free cycles after %d warm-up cycles: start %.1f MiB, growth "
           "at every 2000 cycles (KiB): %s" % (CYCLES, WARMUP, start / 2**20,
                                               ", ".join("%+d" % (b // 1024) for b in samples)))
    assert samples[-1] < LIMIT, samples


# The new objects: session + RunOptions + io_binding + OrtValue + pickle round trip per cycle.
# CI runs ONNXRUN_LEAK_CYCLES (default 2,000) after 500 warm-up cycles; the long mode
# (docs/python.md) is ONNXRUN_LEAK_CYCLES=10000.
API_CYCLES = int(os.environ.get("ONNXRUN_LEAK_CYCLES", "2000"))
API_WARMUP = 500


def test_rss_stays_flat_with_io_binding_ort_values_and_pickling(report):
    import pickle
    import time
    path = os.path.join(MODELS, "upsampler", "model.onnx")
    with open(path, "rb") as f:
        data = f.read()
    x = np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)
    out = np.empty((1, 3, 128, 128), dtype=np.float32)

    def cycle(i):
        sess = onnxrun.InferenceSession(data if i % 2 else path, threads=2 if i % 5 == 0 else 1)
        ro = onnxrun.RunOptions()
        binding = sess.io_binding()
        binding.bind_ortvalue_input("image", onnxrun.OrtValue.ortvalue_from_numpy(x))
        if i % 3:
            binding.bind_ortvalue_output("upscaled", onnxrun.OrtValue(out))
        else:
            binding.bind_output("upscaled")
        sess.run_with_iobinding(binding, ro)
        y = binding.get_outputs()[0].numpy()
        again = pickle.loads(pickle.dumps(sess))
        z, = again.run_with_ort_values(None, {"image": onnxrun.OrtValue.ortvalue_from_numpy(x)}, ro)
        assert np.array_equal(y, z.numpy())
        if i % 10 == 0:
            ro.terminate = True
            with pytest.raises(onnxrun.Cancelled):
                sess.run(None, {"image": x}, ro)

    for i in range(API_WARMUP):
        cycle(i)
    gc.collect()
    start = rss()
    samples = []
    step = max(1, API_CYCLES // 5)
    t0 = time.perf_counter()
    for i in range(API_CYCLES):
        cycle(i)
        if (i + 1) % step == 0:
            gc.collect()
            samples.append(rss() - start)
    seconds = time.perf_counter() - t0
    report("RSS over %d cycles of session + RunOptions + io_binding + OrtValue + pickle round trip "
           "(models/upsampler) after %d warm-up cycles: start %.1f MiB, growth at every %d cycles "
           "(KiB): %s; %.2f ms per cycle"
           % (API_CYCLES, API_WARMUP, start / 2**20, step,
              ", ".join("%+d" % (b // 1024) for b in samples), 1e3 * seconds / API_CYCLES))
    assert samples[-1] < LIMIT, samples
