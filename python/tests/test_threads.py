"""run() releases the GIL, so Python threads with their own sessions run in parallel.
(The speedup itself is measured by python/bench/measure.py, not asserted here.)"""
import sys
import threading

import numpy as np
import pytest

import onnxrun
from helpers import convt_model


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(5)
    w = rng.standard_normal((64, 32, 4, 4)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    return convt_model([1, 64, 32, 32], w, b, stride=2, pad=1)


def test_another_thread_runs_python_during_run(model):
    """With a switch interval of 100 s the interpreter never takes the GIL away from the main
    thread; the watcher thread can only execute Python code if run() lets go of it. The
    watcher records whether the main thread was inside run() at the moment it got to run."""
    sess = onnxrun.InferenceSession(model, threads=1)
    x = np.random.default_rng(6).standard_normal((1, 64, 32, 32)).astype(np.float32)
    state = {"in_run": False, "seen": None}
    go = threading.Event()

    def watcher():
        go.wait()
        state["seen"] = state["in_run"]

    old = sys.getswitchinterval()
    t = threading.Thread(target=watcher)
    t.start()
    sys.setswitchinterval(100.0)
    try:
        go.set()
        for _ in range(500):
            state["in_run"] = True
            sess.run(None, {"x": x})
            state["in_run"] = False
            if state["seen"] is not None:
                break
    finally:
        sys.setswitchinterval(old)
        t.join()
    assert state["seen"] is True


def test_two_sessions_in_two_threads_give_the_sequential_results(model):
    sessions = [onnxrun.InferenceSession(model, threads=1) for _ in range(2)]
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal((1, 64, 32, 32)).astype(np.float32) for _ in range(6)]
    want = [sessions[0].run(None, {"x": x})[0] for x in inputs]
    got = [[None] * len(inputs) for _ in sessions]
    errors = []

    def worker(k):
        try:
            for r in range(3):
                for i, x in enumerate(inputs):
                    got[k][i] = sessions[k].run(None, {"x": x})[0]
        except Exception as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for k in range(2):
        for i in range(len(inputs)):
            np.testing.assert_array_equal(got[k][i], want[i])
