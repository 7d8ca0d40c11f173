"""The Dask example (python/examples/dask_upscale.py): a folder of images upscaled by
models/upsampler on a dask.distributed LocalCluster of 2 worker processes, outputs equal
bit for bit to a local loop. Needs python3-dask and python3-distributed (.ci/deps.sh --test
installs them)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import onnxrun
from helpers import MODELS, REPO

pytest.importorskip("distributed", reason="python3-distributed is not installed (.ci/deps.sh --test)")

SCRIPT = os.path.join(REPO, "python", "examples", "dask_upscale.py")


def test_dask_local_cluster_upscales_a_folder_like_a_local_loop(tmp_path, report):
    in_dir, out_dir = tmp_path / "images", tmp_path / "upscaled"
    in_dir.mkdir()
    rng = np.random.default_rng(12)
    for i in range(6):
        np.save(in_dir / ("img%d.npy" % i), rng.random((3, 32, 32), dtype=np.float32))
    proc = subprocess.run([sys.executable, SCRIPT, str(in_dir), str(out_dir)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = proc.stdout.strip().splitlines()[-1]
    m = re.match(r"upscaled 6 images on (\d+) worker processes \(pids ([0-9 ]+), driver (\d+)\)", line)
    assert m, line
    pids = set(m.group(2).split())
    assert m.group(3) not in pids  # the work ran in the workers, not in the driver
    report("dask example: " + line)
    # The check the script made, made again here from its files.
    sess = onnxrun.InferenceSession(os.path.join(MODELS, "upsampler", "model.onnx"), threads=1)
    for i in range(6):
        x = np.load(in_dir / ("img%d.npy" % i))
        got = np.load(out_dir / ("img%d.npy" % i))
        want = sess.run(None, {"image": x[None]})[0][0]
        assert got.dtype == np.float32 and got.shape == (3, 128, 128)
        assert np.array_equal(got, want), i

