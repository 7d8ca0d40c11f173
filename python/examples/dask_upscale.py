"""Upscales a folder of images with the example model (models/upsampler) on a Dask cluster.

    python3 dask_upscale.py IN_DIR OUT_DIR                       # a local cluster, 2 processes
    python3 dask_upscale.py IN_DIR OUT_DIR --scheduler tcp://host:8786   # a real cluster
    python3 dask_upscale.py --make-images 8 IN_DIR               # writes 8 demo images

Images are .npy float32 arrays [3, H, W]; each becomes OUT_DIR/<name>.npy, [3, 2H, 2W]. The
InferenceSession is created once here and shipped to the workers as it is: onnxrun sessions
pickle (model bytes and options travel; each worker loads the model again). The driver reads
the images and writes the results, so the workers need no shared storage. The script checks
that the outputs equal those of a plain loop over the same session and prints which worker
processes did the work.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
from typing import Any, Dict, Iterable, List, Tuple

import numpy as np
import numpy.typing as npt

import onnxrun

Array = npt.NDArray[Any]
HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "models", "upsampler", "model.onnx")


def upscale_partition(items: Iterable[Tuple[str, Array]], session: onnxrun.InferenceSession
                      ) -> List[Tuple[str, Array, int]]:
    """Runs on a worker: upscales each (name, image) of one partition with the unpickled
    session; returns (name, upscaled image, worker pid)."""
    name = session.get_inputs()[0].name
    return [(key, session.run(None, {name: image[None]})[0][0], os.getpid()) for key, image in items]


def read_images(in_dir: str) -> List[Tuple[str, Array]]:
    paths = sorted(glob.glob(os.path.join(in_dir, "*.npy")))
    return [(os.path.splitext(os.path.basename(p))[0], np.load(p)) for p in paths]


def upscale_on_dask(images: List[Tuple[str, Array]], session: onnxrun.InferenceSession,
                    scheduler: str = "", workers: int = 2) -> Tuple[Dict[str, Array], List[int]]:
    """Upscales images over a Dask cluster (scheduler address, or a LocalCluster with
    `workers` single-threaded processes): returns {name: image} and the worker pids used."""
    import dask.bag as db
    from distributed import Client, LocalCluster

    if scheduler:
        client = Client(scheduler)
        cluster = None
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        bag = db.from_sequence(images, npartitions=max(1, min(len(images), 2 * workers)))
        results = bag.map_partitions(upscale_partition, session).compute()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return {key: y for key, y, _ in results}, sorted({pid for _, _, pid in results})


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--make-images", type=int, default=0, metavar="N")
    parser.add_argument("--scheduler", default="", help="address of a running Dask scheduler")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster processes")
    parser.add_argument("dirs", nargs="+")
    args = parser.parse_args(argv)
    if args.make_images:
        os.makedirs(args.dirs[0], exist_ok=True)
        rng = np.random.default_rng(0)
        for i in range(args.make_images):
            np.save(os.path.join(args.dirs[0], "image_%03d.npy" % i),
                    rng.random((3, 32, 32), dtype=np.float32))
        return 0
    in_dir, out_dir = args.dirs
    session = onnxrun.InferenceSession(MODEL, threads=1)
    images = read_images(in_dir)
    upscaled, pids = upscale_on_dask(images, session, args.scheduler, args.workers)
    os.makedirs(out_dir, exist_ok=True)
    for key, y in upscaled.items():
        np.save(os.path.join(out_dir, key + ".npy"), y)
    name = session.get_inputs()[0].name
    identical = all(np.array_equal(upscaled[key], session.run(None, {name: image[None]})[0][0])
                    for key, image in images)
    print("upscaled %d images on %d worker processes (pids %s, driver %d); identical to a local "
          "loop: %s" % (len(upscaled), len(pids), " ".join(map(str, pids)), os.getpid(), identical))
    return 0 if identical and len(upscaled) == len(images) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
