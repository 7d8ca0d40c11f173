#!/usr/bin/python3
"""Generate one single-node ONNX model per case of the benchmark suite.

Usage (from the repo root):
    /usr/bin/python3 bench/make_models.py [SUITE_JSON] [-o OUT_DIR] [--filter REGEX]

Defaults: SUITE_JSON = ../shared/bench/suite.json (relative to the repo root),
OUT_DIR = bench/build/models. Writes OUT_DIR/<case>/model.onnx.

Each model: graph input X (float32, the case's x shape), initializers W and (if
"bias") B filled with fixed-seed random values, one ConvTranspose or DepthToSpace
node, output Y with the shape computed here from the spec (so both runtimes are
checked against the same declared shape). Opset 13, IR version 7, so that the
ONNX Runtime build shipped by onnxruntime-node loads them.

Needs Debian's python3-onnx (1.12) and numpy: run it with /usr/bin/python3.
Also writes OUT_DIR/<case>/meta.json (op, dtype, shapes, FLOPs for ConvTranspose or bytes
moved for DepthToSpace, and tensor_bytes = bytes of X, W, B and Y for the roofline; read by
bench/report.py) and OUT_DIR/<case>/input.bin (the bench input X: uniform [-1, 1), fixed
seed, raw little-endian float32, or float64 for a float64 case; read by every bench tool so
the oracle checks compare the same computation). For ConvTranspose also w.bin and b.bin (W
and B as stored in model.onnx, raw little-endian, ONNX layout) and deconv.txt (the geometry,
one "key value..." line each): what bench/dnnl_bench.c reads, since it has no ONNX parser.

Float64 variants: the cases named in FLOAT64_VARIANTS are also generated as "<name>_f64", the
same shapes with X, W, B and Y in float64 (no peer runtime has a float64 ConvTranspose: they
are timed by onnxrun_bench alone, against the FP64 FMA peak). --no-float64 leaves them out.
--print-cases prints the generated case names (not _floor) on stdout, one a line.
"""
import argparse
import json
import os
import re
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPSET = 13
IR_VERSION = 7
# the suite cases that also get a float64 variant "<name>_f64" (channel-heavy 2-D, a
# stride-1 3x3, a 2x2 upsampler and a 1-D vocoder layer)
FLOAT64_VARIANTS = ("dcgan_512_256_8x8_k4s2p1", "dcgan_256_128_16x16_k4s2p1", "k3s1p1_64_64_128x128",
                    "unet_512_256_32x32_k2s2", "hifigan_256_128_T800_k16s8p4")
DTYPES = {"float32": (TensorProto.FLOAT, np.float32, "<f4"), "float64": (TensorProto.DOUBLE, np.float64, "<f8")}


def case_seed(name):
    # Stable across Python runs (hash() is salted; crc32 is not).
    return zlib.crc32(name.encode("utf-8")) & 0x7FFFFFFF


def conv_transpose_out_shape(x, w, attrs):
    """Output shape per the ONNX spec (NOTSET / explicit pads only: all the suite uses)."""
    n, c = x[0], x[1]
    spatial = x[2:]
    d = len(spatial)
    group = attrs.get("group", 1)
    k = w[2:]
    strides = attrs.get("strides", [1] * d)
    dil = attrs.get("dilations", [1] * d)
    pads = attrs.get("pads", [0] * (2 * d))
    opad = attrs.get("output_padding", [0] * d)
    if "auto_pad" in attrs and attrs["auto_pad"] not in ("NOTSET",):
        raise ValueError("auto_pad other than NOTSET not supported by the generator")
    if "output_shape" in attrs:
        raise ValueError("output_shape not supported by the generator")
    if w[0] != c:
        raise ValueError("W.shape[0] must equal C")
    m = w[1] * group
    out = []
    for i in range(d):
        natural = strides[i] * (spatial[i] - 1) + opad[i] + (k[i] - 1) * dil[i] + 1
        out.append(natural - pads[i] - pads[i + d])
    return [n, m] + out


def conv_transpose_flops(x, w, attrs):
    # Convention (bench/README.md): every input element scatters into every kernel tap of
    # the M/group output channels of its group: 2 * N * C_in * (M/group) * prod(k) * prod(in).
    n, c = x[0], x[1]
    m_per_group = w[1]
    return 2 * n * c * m_per_group * int(np.prod(w[2:])) * int(np.prod(x[2:]))


def depth_to_space_out_shape(x, attrs):
    b = attrs["blocksize"]
    n, c, h, w = x
    if c % (b * b):
        raise ValueError("C not divisible by blocksize^2")
    return [n, c // (b * b), h * b, w * b]


def build(case):
    name = case["name"]
    op = case["op"]
    dtype = case.get("dtype", "float32")
    if dtype not in DTYPES:
        raise ValueError(f"{name}: only float32 and float64 cases are supported")
    elem, npt, _ = DTYPES[dtype]
    esize = np.dtype(npt).itemsize
    x_shape = list(case["x"])
    attrs = dict(case.get("attrs", {}))
    rng = np.random.default_rng(case_seed(name))
    inits = []
    node_inputs = ["X"]
    meta = {"case": name, "op": op, "dtype": dtype, "x": x_shape, "attrs": attrs}
    if op == "ConvTranspose":
        w_shape = list(case["w"])
        y_shape = conv_transpose_out_shape(x_shape, w_shape, attrs)
        # Scale like a trained layer's init (keeps outputs O(1) and the oracle check meaningful).
        fan = w_shape[0] * int(np.prod(w_shape[2:]))
        wv = (rng.standard_normal(w_shape, dtype=npt) / npt(np.sqrt(fan))).astype(npt)
        inits.append(numpy_helper.from_array(wv, "W"))
        node_inputs.append("W")
        nb = 0
        if case.get("bias", False):
            bv = rng.standard_normal([y_shape[1]], dtype=npt) * npt(0.1)
            inits.append(numpy_helper.from_array(bv.astype(npt), "B"))
            node_inputs.append("B")
            nb = y_shape[1]
        meta.update(w=w_shape, bias=bool(case.get("bias", False)),
                    flops=conv_transpose_flops(x_shape, w_shape, attrs),
                    tensor_bytes=esize * (int(np.prod(x_shape)) + int(np.prod(w_shape)) + nb
                                          + int(np.prod(y_shape))))
    elif op == "DepthToSpace":
        y_shape = depth_to_space_out_shape(x_shape, attrs)
        # read + write: 2 * tensor bytes
        meta.update(bytes=2 * esize * int(np.prod(x_shape)), tensor_bytes=2 * esize * int(np.prod(x_shape)))
    else:
        raise ValueError(f"{name}: unknown op {op}")
    meta["y"] = y_shape
    node = helper.make_node(op, node_inputs, ["Y"], name=name, **attrs)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("X", elem, x_shape)],
        [helper.make_tensor_value_info("Y", elem, y_shape)],
        initializer=inits)
    model = helper.make_model(graph, producer_name="onnxrun-bench",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model, meta


def write_deconv_files(d, model, meta):
    """w.bin, b.bin (from the model's own initializers) and deconv.txt for dnnl_bench."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    _, _, le = DTYPES[meta["dtype"]]
    inits["W"].astype(le).tofile(os.path.join(d, "w.bin"))
    if "B" in inits:
        inits["B"].astype(le).tofile(os.path.join(d, "b.bin"))
    elif os.path.exists(os.path.join(d, "b.bin")):
        os.remove(os.path.join(d, "b.bin"))
    a = meta["attrs"]
    nd = len(meta["x"]) - 2
    lines = [
        f"dtype {meta['dtype']}",
        "x " + " ".join(map(str, meta["x"])),
        "w " + " ".join(map(str, meta["w"])),
        "y " + " ".join(map(str, meta["y"])),
        f"group {a.get('group', 1)}",
        "strides " + " ".join(map(str, a.get("strides", [1] * nd))),
        "dilations " + " ".join(map(str, a.get("dilations", [1] * nd))),
        "pads " + " ".join(map(str, a.get("pads", [0] * (2 * nd)))),
        "output_padding " + " ".join(map(str, a.get("output_padding", [0] * nd))),
        f"bias {1 if 'B' in inits else 0}",
    ]
    with open(os.path.join(d, "deconv.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite", nargs="?", default=os.path.join(REPO, "..", "shared", "bench", "suite.json"))
    ap.add_argument("-o", "--out", default=os.path.join(REPO, "bench", "build", "models"))
    ap.add_argument("--filter", default="", help="only cases whose name matches this regular expression (re.search)")
    ap.add_argument("--no-float64", action="store_true", help="leave out the float64 variants")
    ap.add_argument("--print-cases", action="store_true", help="print the generated case names on stdout")
    args = ap.parse_args(argv)
    with open(args.suite) as f:
        suite = json.load(f)
    cases = []
    for case in suite["cases"]:
        cases.append(case)
        if case["name"] in FLOAT64_VARIANTS and not args.no_float64:
            cases.append(dict(case, name=case["name"] + "_f64", dtype="float64"))
    n = 0
    # A null model (DepthToSpace, blocksize 1, one element): its time is each tool's fixed
    # per-run overhead (API call, output allocation, for ORT the Node binding), reported as
    # the "floor" beside the results.
    floor = {"name": "_floor", "op": "DepthToSpace", "dtype": "float32", "x": [1, 1, 1, 1],
             "attrs": {"blocksize": 1, "mode": "DCR"}}
    for case in [floor] + cases:
        if args.filter and case is not floor and not re.search(args.filter, case["name"]):
            continue
        model, meta = build(case)
        d = os.path.join(args.out, case["name"])
        os.makedirs(d, exist_ok=True)
        onnx.save(model, os.path.join(d, "model.onnx"))
        # The bench input, shared by onnxrun_bench and ort_bench.js so the oracle check
        # compares the same computation: uniform [-1, 1), fixed seed, raw little-endian float32.
        xr = np.random.default_rng(case_seed(case["name"]) ^ 0x5EED)
        xv = xr.uniform(-1.0, 1.0, size=meta["x"]).astype(DTYPES[meta["dtype"]][2])
        xv.tofile(os.path.join(d, "input.bin"))
        if case["op"] == "ConvTranspose":
            write_deconv_files(d, model, meta)
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        if case is not floor and args.print_cases:
            print(case["name"])
        n += 1
    print(f"make_models: wrote {n} models to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
