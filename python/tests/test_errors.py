"""Every library error becomes an exception carrying the library's message; hostile files in
tests/ raise, never crash."""
import glob
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import onnxrun
from helpers import BAD, MALFORMED, MODELS

# What each model in tests/bad is built to break (tests/bad/make_bad.py) and the words the
# message must contain.
BAD_MODELS = {
    "bad_blocksize.onnx": (onnxrun.InvalidModel, "not divisible by blocksize"),
    "bad_weights.onnx": (onnxrun.InvalidModel, "must equal the input channels"),
    "cycle.onnx": (onnxrun.InvalidModel, "cycle"),
    "dangling.onnx": (onnxrun.InvalidModel, "'ghost'"),
    "duplicate_producer.onnx": (onnxrun.InvalidModel, "already produced"),
    "self_loop.onnx": (onnxrun.InvalidModel, "cycle"),
    "unsupported.onnx": (onnxrun.Unsupported, "2 unsupported nodes: node 'relu1' (Relu"),
}

# The raw-byte files of tests/malformed (tests/malformed/make_malformed.py).
MALFORMED_FILES = {
    "bad_truncated.onnx": (onnxrun.InvalidModel, "truncated or corrupt"),
    "bad_garbage.onnx": (onnxrun.InvalidModel, "truncated or corrupt"),
    "bad_wire_type.onnx": (onnxrun.InvalidModel, "truncated or corrupt"),
    "bad_overlong_varint.onnx": (onnxrun.InvalidModel, "truncated or corrupt"),
    "bad_length_overrun.onnx": (onnxrun.InvalidModel, "truncated or corrupt"),
    "bad_empty.onnx": (onnxrun.InvalidModel, "empty"),
    "bad_magic.npy": (onnxrun.InvalidInput, "bad magic"),
    "bad_version.npy": (onnxrun.Unsupported, "version 4.0"),
    "bad_header_overrun.npy": (onnxrun.InvalidInput, "truncated .npy header"),
    "bad_not_dict.npy": (onnxrun.InvalidInput, "expected '{'"),
    "bad_missing_shape.npy": (onnxrun.InvalidInput, "lacks 'shape'"),
    "bad_unknown_key.npy": (onnxrun.InvalidInput, "unexpected key 'x'"),
    "bad_negative_dim.npy": (onnxrun.InvalidInput, "non-negative integer dimension"),
    "bad_dim_overflow.npy": (onnxrun.LimitExceeded, "overflows int64"),
    "bad_size_overflow.npy": (onnxrun.LimitExceeded, "too large"),
    "bad_short_data.npy": (onnxrun.InvalidInput, "7 bytes, expected 8"),
    "bad_long_data.npy": (onnxrun.InvalidInput, "9 bytes, expected 8"),
    "bad_fortran.npy": (onnxrun.Unsupported, "Fortran"),
    "bad_object.npy": (onnxrun.Unsupported, "object arrays"),
    "bad_unterminated.npy": (onnxrun.Unsupported, "not supported"),
    "bad_garbage.pb": (onnxrun.InvalidInput, "not a valid TensorProto"),
    "bad_raw_short.pb": (onnxrun.InvalidInput, "tensor 't': raw_data has 15 bytes, expected 16"),
    "bad_huge_dims.pb": (onnxrun.LimitExceeded, "tensor 't': element count overflows"),
    "bad_unknown_dtype.pb": (onnxrun.InvalidInput, "tensor 't': unknown data_type 99"),
    "bad_external.pb": (onnxrun.InvalidInput, "external data is not allowed"),
}

STATUS = {onnxrun.InvalidArgument: 1, onnxrun.OutOfMemory: 2, onnxrun.FileError: 3,
          onnxrun.InvalidModel: 4, onnxrun.Unsupported: 5, onnxrun.InvalidInput: 6,
          onnxrun.LimitExceeded: 7, onnxrun.RuntimeFailure: 8}


def test_exception_classes():
    for cls, status in STATUS.items():
        assert issubclass(cls, onnxrun.Error)
    assert issubclass(onnxrun.InvalidArgument, ValueError)
    assert issubclass(onnxrun.InvalidInput, ValueError)
    assert issubclass(onnxrun.OutOfMemory, MemoryError)
    assert issubclass(onnxrun.FileError, OSError)
    assert issubclass(onnxrun.Unsupported, NotImplementedError)
    assert issubclass(onnxrun.RuntimeFailure, RuntimeError)


@pytest.mark.parametrize("name", sorted(BAD_MODELS))
def test_bad_models_raise(name):
    path = os.path.join(BAD, name)
    cls, needle = BAD_MODELS[name]
    with pytest.raises(cls) as e:
        onnxrun.InferenceSession(path)
    assert needle in str(e.value) and path in str(e.value)
    assert e.value.status == STATUS[cls]
    with open(path, "rb") as f:
        with pytest.raises(cls, match="not divisible|channels|cycle|ghost|already|unsupported"):
            onnxrun.InferenceSession(f.read())


def test_every_bad_model_is_covered():
    assert sorted(os.path.basename(p) for p in glob.glob(os.path.join(BAD, "*.onnx"))) == sorted(BAD_MODELS)


@pytest.mark.parametrize("name", sorted(MALFORMED_FILES))
def test_malformed_files_raise(name):
    path = os.path.join(MALFORMED, name)
    cls, needle = MALFORMED_FILES[name]
    with pytest.raises(cls) as e:
        if name.endswith(".onnx"):
            onnxrun.InferenceSession(path)
        else:
            onnxrun.load_tensor(path)
    assert needle in str(e.value), str(e.value)
    assert name in str(e.value)


def zeros_for(sess):
    feed = {}
    for arg in sess.get_inputs():
        dims = [d if isinstance(d, int) else 1 for d in arg.shape]
        dtype = {"tensor(float)": np.float32, "tensor(int64)": np.int64}.get(arg.type, np.float32)
        feed[arg.name] = np.zeros(dims, dtype)
    return feed


def test_fuzzer_regressions_are_clean():
    """crash_* (fuzzer finds): any outcome but a crash. slow_* are valid but far too slow to
    run (tests/malformed/make_malformed.py): they are only loaded."""
    found = sorted(glob.glob(os.path.join(MALFORMED, "crash_*")) + glob.glob(os.path.join(MALFORMED, "slow_*")))
    assert found
    for path in found:
        try:
            sess = onnxrun.InferenceSession(path, max_memory="64M")
            if os.path.basename(path).startswith("crash_"):
                sess.run(None, zeros_for(sess))
        except onnxrun.Error:
            pass


def test_missing_model_file():
    with pytest.raises(onnxrun.FileError, match="no_such_model.onnx") as e:
        onnxrun.InferenceSession("/nonexistent/no_such_model.onnx")
    assert isinstance(e.value, OSError)


def test_random_bytes_and_empty_model():
    with pytest.raises(onnxrun.InvalidModel, match="empty"):
        onnxrun.InferenceSession(b"")
    with pytest.raises(onnxrun.InvalidModel):
        onnxrun.InferenceSession(b"\x08\x07\x12\xff")


def test_out_of_memory_is_memory_error():
    """An address-space limit makes the library's allocation of a 1.6 GB output fail: the run
    raises onnxrun.OutOfMemory (a MemoryError) with the library's message, in a child process
    so that the limit does not touch the test process."""
    code = textwrap.dedent("""
        import resource, sys
        import numpy as np
        import onnxrun
        from onnx import TensorProto, helper, numpy_helper
        # ConvTranspose with stride 20000: a [1,1,2,2] input gives a [1,1,20001,20001] output.
        w = numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float32), "W")
        node = helper.make_node("ConvTranspose", ["x", "W"], ["y"], name="wide", strides=[20000, 20000])
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        sess = onnxrun.InferenceSession(m.SerializeToString(), threads=1)
        x = np.ones((1, 1, 2, 2), np.float32)
        import re
        with open("/proc/self/status") as f:
            vm = int(re.search(r"VmSize:\\s+(\\d+) kB", f.read()).group(1)) * 1024
        limit = vm + (400 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            sess.run(None, {"x": x})
        except MemoryError as e:
            print(type(e).__name__, isinstance(e, onnxrun.Error), e.status, e)
            sys.exit(0)
        print("no error")
        sys.exit(1)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("OutOfMemory True 2 "), r.stdout
    assert "out of memory" in r.stdout.lower()
