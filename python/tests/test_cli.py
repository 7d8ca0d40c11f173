"""python3 -m onnxrun runs the CLI shipped in the package (built from src/cli)."""
import os
import subprocess
import sys

import numpy as np

import onnxrun
from helpers import BAD, MODELS, TEST_DATA, read_pb


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "onnxrun"] + list(args), capture_output=True,
                          text=True, timeout=300, cwd=cwd)


def test_packaged_cli_exists():
    assert os.access(onnxrun.cli_path(), os.X_OK)


def test_model_and_test_data_pass():
    d = os.path.join(MODELS, "upsampler")
    r = cli(os.path.join(d, "model.onnx"), os.path.join(d, "test_data_set_0"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("PASS output 'upscaled' (float [1,3,128,128])")


def test_info_shows_the_symbolic_shapes():
    r = cli("--info", os.path.join(MODELS, "symbolic_batch", "model.onnx"))
    assert r.returncode == 0, r.stderr
    assert "input 'image': float [N,3,8,8]" in r.stdout
    assert "output 'upscaled': float [N,3,32,32]" in r.stdout
    assert "node 'pixel_shuffle' (DepthToSpace v11)" in r.stdout


def test_test_subcommand_over_the_conformance_cases():
    r = cli("test", TEST_DATA)
    assert r.returncode == 0, r.stdout + r.stderr
    n = len([d for d in os.listdir(TEST_DATA) if os.path.isfile(os.path.join(TEST_DATA, d, "model.onnx"))])
    assert "test: %d passed, 0 failed" % n in r.stdout


def test_errors_and_mismatches_keep_the_cli_exit_statuses(tmp_path):
    r = cli(os.path.join(BAD, "unsupported.onnx"), "--random")
    assert r.returncode == 2
    assert r.stderr.startswith("onnxrun: error: model '%s': 2 unsupported nodes" % os.path.join(BAD, "unsupported.onnx"))
    d = os.path.join(MODELS, "upsampler")
    wrong = tmp_path / "case"
    wrong.mkdir()
    x = read_pb(os.path.join(d, "test_data_set_0", "input_0.pb"))[1]
    y = read_pb(os.path.join(d, "test_data_set_0", "output_0.pb"))[1]
    onnxrun.save_tensor(str(wrong / "input_0.pb"), x, "image")
    onnxrun.save_tensor(str(wrong / "output_0.pb"), y + 1, "upscaled")
    r = cli(os.path.join(d, "model.onnx"), str(wrong))
    assert r.returncode == 1
    assert r.stdout.startswith("FAIL output 'upscaled'")
    assert cli("--no-such-option").returncode == 2


def test_cli_outputs_match_the_session(tmp_path):
    """-o/--npy files written by the CLI, read by load_tensor, equal InferenceSession.run."""
    d = os.path.join(MODELS, "multi_use")
    out = tmp_path / "out"
    r = cli(os.path.join(d, "model.onnx"), os.path.join(d, "test_data_set_0"), "-o", str(out), "--npy")
    assert r.returncode == 0, r.stderr
    sess = onnxrun.InferenceSession(os.path.join(d, "model.onnx"))
    x = onnxrun.load_tensor(os.path.join(d, "test_data_set_0", "input_0.pb"))
    got = sess.run(None, {"x": x})
    for i, (arg, y) in enumerate(zip(sess.get_outputs(), got)):
        pb, name = onnxrun.load_tensor(str(out / ("output_%d.pb" % i)), return_name=True)
        assert name == arg.name
        np.testing.assert_array_equal(pb, y)
        np.testing.assert_array_equal(onnxrun.load_tensor(str(out / (arg.name + ".npy"))), y)
