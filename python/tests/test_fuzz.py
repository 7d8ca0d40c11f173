"""Fuzz-style tests through the Python API: random bytes, mutated models and random arrays
must end in a result or an exception (onnxrun.Error, or TypeError/ValueError for feeds that
are not arrays), never in a crash. Seeds are fixed; each failure names its seed."""
import glob
import os

import numpy as np
import pytest

import onnxrun
from helpers import MODELS, TEST_DATA

SEED = 20240617
MODEL_FILES = sorted(glob.glob(os.path.join(MODELS, "*", "model.onnx")) +
                     glob.glob(os.path.join(TEST_DATA, "*", "model.onnx")))
MODEL_FILES = [p for p in MODEL_FILES if "external_data" not in p]  # needs its folder


def model_bytes():
    out = []
    for p in MODEL_FILES:
        with open(p, "rb") as f:
            out.append(f.read())
    return out


def feed_for(sess, rng):
    """Random inputs of the declared types; symbolic or unknown dims become 1..3."""
    feed = {}
    for arg in sess.get_inputs():
        shape = [d if isinstance(d, int) else int(rng.integers(1, 4)) for d in (arg.shape or [])]
        if int(np.prod(shape, dtype=np.int64)) > 1 << 20:
            shape = [min(d, 4) for d in shape]
        dtype = {"tensor(float)": np.float32, "tensor(double)": np.float64,
                 "tensor(float16)": np.float16, "tensor(int64)": np.int64}.get(arg.type, np.float32)
        feed[arg.name] = rng.standard_normal(shape).astype(dtype)
    return feed


def load_and_run(data, rng):
    """Loads data as a model and, when it loads, runs it once. Returns what happened."""
    try:
        sess = onnxrun.InferenceSession(data, threads=1, max_memory="16M")
    except onnxrun.Error as e:
        return type(e).__name__
    try:
        sess.run(None, feed_for(sess, rng))
        return "ran"
    except onnxrun.Error as e:
        return "run " + type(e).__name__


def test_random_bytes(report):
    rng = np.random.default_rng(SEED)
    seen = {}
    models = model_bytes()
    for i in range(3000):
        seed = SEED + i
        r = np.random.default_rng(seed)
        n = int(r.integers(0, 600))
        data = r.integers(0, 256, size=n, dtype=np.uint8).tobytes()
        if i % 3 == 0:  # a real model's first bytes, then noise
            m = models[i % len(models)]
            data = m[:int(r.integers(0, len(m)))] + data
        try:
            what = load_and_run(data, rng)
        except Exception as e:  # anything but onnxrun.Error is a bug
            pytest.fail("random bytes, seed %d: %r" % (seed, e))
        seen[what] = seen.get(what, 0) + 1
    report("fuzz random bytes (3000 inputs): %s" % dict(sorted(seen.items())))
    assert sum(v for k, v in seen.items() if k != "ran") > 2500


def mutate(data, r):
    b = bytearray(data)
    for _ in range(int(r.integers(1, 4))):
        op = int(r.integers(0, 5))
        if not b:
            break
        pos = int(r.integers(0, len(b)))
        if op == 0:
            b[pos] = int(r.integers(0, 256))
        elif op == 1:
            b[pos] ^= 1 << int(r.integers(0, 8))
        elif op == 2:
            del b[pos:]
        elif op == 3:
            n = int(r.integers(1, 16))
            b[pos:pos] = b[pos:pos + n]
        else:
            b[pos:pos] = r.integers(0, 256, size=int(r.integers(1, 8)), dtype=np.uint8).tobytes()
    return bytes(b)


@pytest.mark.filterwarnings("ignore::onnxrun.ModelWarning")  # mutated ir_version fields
def test_mutated_models(report):
    models = model_bytes()
    seen = {}
    for i in range(2000):
        seed = SEED * 3 + i
        r = np.random.default_rng(seed)
        data = mutate(models[i % len(models)], r)
        try:
            what = load_and_run(data, r)
        except Exception as e:
            pytest.fail("mutated %s, seed %d: %r" % (MODEL_FILES[i % len(models)], seed, e))
        seen[what] = seen.get(what, 0) + 1
    report("fuzz mutated models (2000 inputs): %s" % dict(sorted(seen.items())))
    assert seen.get("ran", 0) > 0 and len(seen) > 2  # both paths were exercised


DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128, object, "U3",
          "S2", ">f4", ">i8", "datetime64[s]", np.longdouble, [("a", "<f4")]]


def random_feed_value(r):
    kind = int(r.integers(0, 10))
    if kind == 0:  # not arrays at all
        return [None, 1, 2.5, "text", b"x", [1, 2], [[1.0], [2.0, 3.0]], {"a": 1}, object()][
            int(r.integers(0, 9))]
    dtype = np.dtype(DTYPES[int(r.integers(0, len(DTYPES)))])
    rank = int(r.integers(0, 7))
    shape = tuple(int(r.integers(0, 5)) for _ in range(rank))
    a = np.zeros(shape, dtype=dtype)
    if dtype.kind in "iufc" and a.size:
        a[...] = r.integers(-100, 100, size=shape)
    layout = int(r.integers(0, 4))
    if layout == 1 and rank >= 2:
        a = np.asfortranarray(a)
    elif layout == 2 and rank >= 1 and shape[0] > 1:
        a = a[::2]
    elif layout == 3 and rank >= 2:
        a = a.swapaxes(0, rank - 1)
    return a


def test_random_arrays(report):
    names = ["upsampler", "symbolic_batch", "d2s_dcr_int64", "weights_as_input", "multi_use"]
    sessions = [onnxrun.InferenceSession(os.path.join(MODELS, n, "model.onnx"), threads=1) for n in names]
    seen = {}
    for i in range(3000):
        seed = SEED * 7 + i
        r = np.random.default_rng(seed)
        sess = sessions[i % len(sessions)]
        real = [a.name for a in sess.get_inputs()]
        feed = {}
        for name in real + ["W", "bogus"]:
            if r.random() < (0.8 if name in real else 0.1):
                feed[name] = random_feed_value(r)
        if i % 4 == 0:  # the right shapes and dtype: these may run
            feed = feed_for(sess, r)
            if r.random() < 0.5:
                name = real[int(r.integers(0, len(real)))]
                feed[name] = np.asfortranarray(feed[name])
        try:
            sess.run(None, feed)
            what = "ran"
        except onnxrun.Error as e:
            what = type(e).__name__
        except (TypeError, ValueError) as e:
            if isinstance(e, onnxrun.Error):
                raise
            what = "python " + type(e).__name__
        except Exception as e:
            pytest.fail("random arrays, seed %d: %r" % (seed, e))
        seen[what] = seen.get(what, 0) + 1
    report("fuzz random arrays (3000 feeds): %s" % dict(sorted(seen.items())))
    assert seen.get("ran", 0) > 100 and seen.get("InvalidInput", 0) > 100
