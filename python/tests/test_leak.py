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
