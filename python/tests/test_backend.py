"""onnxrun.backend driven by ONNX's own backend test machinery.

Debian's python3-onnx 1.12 ships no backend test data files, but its case generators
(onnx.backend.test.case.node) build every node test case in memory: the model and the inputs
and expected outputs computed by ONNX's reference code. These tests
  - write all of them in the ONNX test layout and run them through ONNX's test Runner
    (onnx.backend.test.runner.Runner) with onnxrun.backend: the ConvTranspose and DepthToSpace
    cases must pass, every other case must be skipped as not compatible (onnxrun reports its
    op as unsupported), none may fail;
  - run the ConvTranspose and DepthToSpace cases again through prepare/run and run_node.
"""
import dataclasses
import io
import unittest

import numpy as np
import pytest
from onnx import numpy_helper

import onnxrun
import onnxrun.backend as backend

OURS = {"ConvTranspose", "DepthToSpace"}
# ONNX 1.12's cases for the two ops (onnx/backend/test/case/node/{convtranspose,depthtospace}.py).
EXPECTED_CASES = [
    "test_convtranspose", "test_convtranspose_1d", "test_convtranspose_3d",
    "test_convtranspose_autopad_same", "test_convtranspose_dilations",
    "test_convtranspose_kernel_shape", "test_convtranspose_output_shape",
    "test_convtranspose_pad", "test_convtranspose_pads",
    "test_depthtospace_crd_mode_example", "test_depthtospace_example",
]


@pytest.fixture(scope="module")
def numpy_aliases():
    """onnx 1.12's case generators and its runner's output comparison still use np.float,
    np.int, np.object and np.bool, aliases of the builtins that numpy 1.24 (Debian 12's)
    removed; they are put back for these tests only, or importing the generators fails."""
    added = []
    for name, builtin in (("float", float), ("int", int), ("object", object), ("bool", bool)):
        if name not in np.__dict__:
            setattr(np, name, builtin)
            added.append(name)
    yield
    for name in added:
        delattr(np, name)


@pytest.fixture(scope="module")
def cases(numpy_aliases):
    from onnx.backend.test.case.node import collect_testcases
    # A falsy op type keeps every case; the generators run once per process. A few names are
    # generated twice in onnx 1.12 (e.g. test_reduce_sum_negative_axes_keepdims_random): as
    # with a data folder, one case per name.
    by_name = {}
    for case in collect_testcases(""):
        by_name.setdefault(case.name, case)
    return list(by_name.values())


def ops_of(case):
    return {n.op_type for n in case.model.graph.node}


def test_onnx_runner_passes_ours_and_skips_the_rest(cases, tmp_path_factory, monkeypatch, report):
    from onnx.backend.test import runner as onnx_runner

    root = tmp_path_factory.mktemp("onnx_node_cases")
    laid_out, no_data = [], []
    for case in cases:
        d = root / case.name
        d.mkdir()
        (d / "model.onnx").write_bytes(case.model.SerializeToString())
        try:
            files = {}
            for k, (ins, outs) in enumerate(case.data_sets):
                for kind, arrays in (("input", ins), ("output", outs)):
                    for i, a in enumerate(arrays):
                        if not isinstance(a, np.ndarray):  # sequences, optionals: no tensor file
                            raise TypeError(type(a).__name__)
                        files["test_data_set_%d/%s_%d.pb" % (k, kind, i)] = \
                            numpy_helper.from_array(a).SerializeToString()
        except (TypeError, ValueError):
            no_data.append(case.name)
            files = {}
        for rel, blob in files.items():
            (d / rel).parent.mkdir(exist_ok=True)
            (d / rel).write_bytes(blob)
        laid_out.append(dataclasses.replace(case, model_dir=str(d)))

    # The Runner reads its cases from onnx's data folder, which Debian does not ship: hand it
    # the cases written above instead.
    monkeypatch.setattr(onnx_runner, "load_model_tests",
                        lambda data_dir=None, kind=None: laid_out if kind == "node" else [])
    runner = onnx_runner.Runner(backend.OnnxrunBackend, __name__)
    runner.include(r"_cpu$")
    result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(runner.test_suite)

    problems = ["%s: %s" % (t.id(), tb.strip().splitlines()[-1]) for t, tb in result.failures + result.errors]
    assert problems == []
    # The Runner adds a _cpu and a _cuda test per case; the include pattern skips the latter.
    skipped = {t.id().rsplit(".", 1)[-1][:-len("_cpu")]: why for t, why in result.skipped
               if t.id().endswith("_cpu")}
    assert result.testsRun == 2 * len(laid_out)
    ran = {c.name for c in laid_out} - set(skipped)
    ours = sorted(c.name for c in cases if ops_of(c) & OURS)
    assert sorted(ran) == ours == EXPECTED_CASES
    assert set(skipped.values()) == {"Not compatible with backend"}
    assert not set(no_data) & set(ran)
    report("ONNX backend node cases through onnx %s's Runner (CPU): %d cases, %d passed, "
           "%d failed, %d skipped as not compatible (unsupported)" % (
               __import__("onnx").__version__, len(laid_out), len(ran), len(problems), len(skipped)))


def test_every_other_case_is_unsupported(cases, report):
    """is_compatible is False only because onnxrun says Unsupported, naming the op."""
    others = [c for c in cases if not ops_of(c) & OURS]
    kinds = {}
    for case in others:
        with pytest.raises(onnxrun.Unsupported) as e:
            onnxrun.InferenceSession(case.model.SerializeToString())
        msg = str(e.value)
        if "unsupported node" in msg:
            assert any("(%s," % op in msg for op in ops_of(case)), (case.name, msg)
            kind = "ops"
        elif "subgraph" in msg:
            kind = "subgraph attributes"
        elif "only tensor types" in msg:
            kind = "non-tensor inputs/outputs"
        else:
            kind = msg
        kinds[kind] = kinds.get(kind, 0) + 1
        assert not backend.is_compatible(case.model)
    assert sum(kinds.values()) == len(cases) - len(EXPECTED_CASES)
    report("ONNX node cases onnxrun rejects as Unsupported, by what it names first: %s"
           % ", ".join("%s %d" % kv for kv in sorted(kinds.items())))


@pytest.mark.parametrize("name", EXPECTED_CASES)
def test_prepare_run_and_run_node(cases, name):
    from onnx.backend.test.runner import Runner
    case = next(c for c in cases if c.name == name)
    assert backend.is_compatible(case.model)
    rep = backend.prepare(case.model, "CPU")
    for ins, outs in case.data_sets:
        got = rep.run(list(ins))
        Runner.assert_similar_outputs(list(outs), list(got), rtol=case.rtol, atol=case.atol)
        got = backend.run_model(case.model, {i.name: a for i, a in zip(case.model.graph.input, ins)})
        Runner.assert_similar_outputs(list(outs), list(got), rtol=case.rtol, atol=case.atol)
        opset = case.model.opset_import[0].version
        node = case.model.graph.node[0]
        got = backend.run_node(node, list(ins), opset_version=opset)
        Runner.assert_similar_outputs(list(outs), list(got), rtol=case.rtol, atol=case.atol)
        assert list(got._fields) == [o for o in node.output if o] or len(got) == len(node.output)
        info = [(o.dtype, o.shape) for o in outs]
        got = backend.run_node(node, list(ins), outputs_info=info, opset_version=opset)
        Runner.assert_similar_outputs(list(outs), list(got), rtol=case.rtol, atol=case.atol)


def test_devices():
    assert backend.supports_device("CPU")
    assert not backend.supports_device("CUDA")
    assert not backend.supports_device("TPU:0")
