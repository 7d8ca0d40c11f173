"""An everyday ONNX Runtime CPU script, run with onnxrun: only the imports name onnxrun.

    python3 ort_style.py [MODEL]      (default: models/upsampler/model.onnx)

It reads the model's metadata, tunes SessionOptions, runs with RunOptions (and terminates a
run from another thread), binds inputs and outputs (the output is computed into a
preallocated array), catches ONNX Runtime's exception classes, runs one session from
several threads and maps a process pool whose workers each open the model. With
`import onnxruntime as ort` and `from onnxruntime.capi...` it is an ONNX Runtime script
(python/tests/test_ort_substitution.py runs it; `mypy --strict` checks it in CI).
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import sys
import threading
from typing import Any, Dict, List, Optional

import numpy as np
import numpy.typing as npt

import onnxrun as ort  # was: import onnxruntime as ort
from onnxrun.capi.onnxruntime_pybind11_state import Fail, InvalidArgument  # was: onnxruntime.capi...

Array = npt.NDArray[Any]

_worker_session: Optional[ort.InferenceSession] = None


def _open_in_worker(model_path: str) -> None:
    """Process pool initializer: each worker opens the model once."""
    global _worker_session
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    _worker_session = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])


def _upscale_in_worker(x: Array) -> Array:
    assert _worker_session is not None
    name = _worker_session.get_inputs()[0].name
    return _worker_session.run(None, {name: x})[0]


def make_session(model_path: str) -> ort.InferenceSession:
    ort.set_default_logger_severity(3)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_mem_pattern = False
    so.enable_cpu_mem_arena = False
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model_path, sess_options=so, providers=["CPUExecutionProvider"])


def main(model_path: str) -> Dict[str, Any]:
    sess = make_session(model_path)
    meta = sess.get_modelmeta()
    inp, out = sess.get_inputs()[0], sess.get_outputs()[0]
    shape = [d if isinstance(d, int) else 1 for d in inp.shape or []]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)

    run_options = ort.RunOptions()
    run_options.log_severity_level = 3
    run_options.logid = "example"
    y = sess.run([out.name], {inp.name: x}, run_options)[0]

    # IO binding: the output lands in a preallocated array.
    y_bound = np.empty(y.shape, dtype=np.float32)
    binding = sess.io_binding()
    binding.bind_cpu_input(inp.name, x)
    binding.bind_output(out.name, "cpu", 0, np.float32, list(y_bound.shape), y_bound.ctypes.data)
    sess.run_with_iobinding(binding)
    ort_values = sess.run_with_ort_values([out.name], {inp.name: ort.OrtValue.ortvalue_from_numpy(x)})

    # ONNX Runtime's exception classes.
    try:
        sess.run(None, {inp.name: x.astype(np.float64)})
        wrong_dtype = "accepted"
    except InvalidArgument:
        wrong_dtype = "InvalidArgument"
    stopped = ort.RunOptions()
    stopped.terminate = True
    try:
        sess.run(None, {inp.name: x}, stopped)
        terminated = "ran"
    except Fail:
        terminated = "Fail"

    # One session, four threads.
    results: List[Optional[Array]] = [None] * 4

    def work(i: int) -> None:
        results[i] = sess.run(None, {inp.name: x * (i + 1)})[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    threads_equal = all(r is not None and np.array_equal(r, sess.run(None, {inp.name: x * (i + 1)})[0])
                        for i, r in enumerate(results))

    # A process pool whose workers open the model themselves.
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx, initializer=_open_in_worker,
                                                initargs=(model_path,)) as pool:
        pooled = list(pool.map(_upscale_in_worker, [x, x * 2]))
    pool_equal = np.array_equal(pooled[0], y) and np.array_equal(pooled[1], sess.run(None, {inp.name: x * 2})[0])

    return {
        "graph_name": meta.graph_name, "producer_name": meta.producer_name,
        "custom_metadata_map": meta.custom_metadata_map, "output_shape": list(y.shape),
        "binding_equal": bool(np.array_equal(y_bound, y)),
        "ort_values_equal": bool(np.array_equal(ort_values[0].numpy(), y)),
        "wrong_dtype": wrong_dtype, "terminated": terminated,
        "threads_equal": bool(threads_equal), "pool_equal": bool(pool_equal),
    }


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "..", "models", "upsampler", "model.onnx")
    for key, value in main(sys.argv[1] if len(sys.argv) > 1 else default).items():
        print("%s: %s" % (key, value))
