"""Module-level functions that worker processes import (multiprocessing and
concurrent.futures pickle functions by reference, so they cannot live in a test body)."""
import numpy as np


def run_session(args):
    """(session, input name, array) -> the first output, run in a worker process on the
    unpickled session."""
    sess, name, x = args
    return sess.run(None, {name: x})[0]


def session_facts(sess):
    """What an unpickled session knows about its options and model."""
    so = sess.get_session_options()
    return (sess.threads, sess.max_memory, so.log_severity_level, so.enable_mem_pattern,
            sess.get_modelmeta().graph_name, [i.name for i in sess.get_inputs()])


def checksum(a):
    return float(np.asarray(a, dtype=np.float64).sum())
