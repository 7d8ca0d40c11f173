#!/usr/bin/python3
"""Cross-check of onnxrun against ONNX Runtime for ConvTranspose and DepthToSpace.

Run through run.sh. Needs Debian's python3-onnx and python3-numpy (/usr/bin/python3).

  crosscheck.py gen N DIR [SEED]   writes DIR/NNNN/{model.onnx, input_<i>.pb, ort_inputs.json,
                                   input_<i>.bin, config.json, ref.npz} for N random configs
  crosscheck.py classify DIR OUT   reads onnxrun_out/output_0.pb (or onnxrun.err) and ort.json
                                   (or ort_error.txt / ort_skip.txt) per case and writes the
                                   summary to OUT (markdown)

Every case is also computed by a float64/exact numpy reference written from the ONNX spec
(ConvTranspose: output size and pads from the spec's equations with floor division, then a
scatter per kernel tap; DepthToSpace: the spec's reshape/transpose/reshape). A case is:
  agree                both runtimes give the reference's shape, and values within the
                       rounding bound (ConvTranspose) or bit-identical (DepthToSpace);
  disagree-documented  ONNX Runtime differs in a way its documentation or messages explain
                       (each reason is checked, e.g. a clamped output is compared with the
                       matching crop of the reference);
  disagree-unexplained anything else (expected 0);
  not-compared         onnxruntime-node cannot build the input tensors (bfloat16, complex).
"""
import json
import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

FLOAT, DOUBLE, FLOAT16, BFLOAT16, STRING, BOOL = 1, 11, 10, 16, 8, 9
NP = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
      9: np.uint8, 10: np.uint16, 11: np.float64, 12: np.uint32, 13: np.uint64, 14: np.complex64,
      15: np.complex128, 16: np.uint16}
NAMES = {1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
         8: "string", 9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64",
         14: "complex64", 15: "complex128", 16: "bfloat16"}
ORT_TYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
             8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64"}


# ---- values -------------------------------------------------------------------------------

def bf16_round(v):
    """float64 array -> bfloat16 bits (round to nearest even via float32)."""
    u = np.asarray(v, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def encode(values, dtype):
    """float64 values -> (storage array, the float64 values it holds)."""
    if dtype == FLOAT:
        s = values.astype(np.float32)
        return s, s.astype(np.float64)
    if dtype == DOUBLE:
        return values, values
    if dtype == FLOAT16:
        s = values.astype(np.float16)
        return s.view(np.uint16), s.astype(np.float64)
    s = bf16_round(values)
    return s, bf16_value(s)


def decode(raw, dtype):
    if dtype == FLOAT:
        return np.frombuffer(raw, np.float32).astype(np.float64)
    if dtype == DOUBLE:
        return np.frombuffer(raw, np.float64)
    if dtype == FLOAT16:
        return np.frombuffer(raw, np.float16).astype(np.float64)
    return bf16_value(np.frombuffer(raw, np.uint16))


def tensor_proto(name, dtype, dims, storage):
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    if dtype == STRING:
        t.string_data.extend(s.encode() for s in storage)
    else:
        t.raw_data = np.ascontiguousarray(storage).tobytes()
    return t


# ---- ConvTranspose ----------------------------------------------------------------------------

def floor_half(t):
    return t // 2  # Python's // is floor division


def ct_geometry(c):
    """Output size and pads per the spec and docs/design.md; also what ONNX Runtime is documented to
    do (negative total padding clamped to 0), for classification."""
    out, pb, ort_out, ort_pb = [], [], [], []
    for i in range(c["n"]):
        s, d, k, inn, op = c["strides"][i], c["dilations"][i], c["k"][i], c["in"][i], c["op"][i]
        natural = s * (inn - 1) + op + (k - 1) * d + 1
        want = None
        if c["output_shape"]:
            want = c["output_shape"][i]
        elif c["auto_pad"] in ("SAME_UPPER", "SAME_LOWER"):
            want = inn * s
        if want is not None:
            total = natural - want
            if c["auto_pad"] == "SAME_UPPER":
                b = floor_half(total)
            else:
                b = total - floor_half(total)
            out.append(want)
            pb.append(b)
            tc = max(total, 0)
            ort_pb.append(tc // 2 if c["auto_pad"] == "SAME_UPPER" else tc - tc // 2)
            ort_out.append(natural - tc if not c["output_shape"] else want)
        elif c["auto_pad"] == "VALID":
            out.append(natural)
            pb.append(0)
            ort_out.append(natural)
            ort_pb.append(0)
        else:
            p = c["pads"] or [0] * (2 * c["n"])
            out.append(natural - p[i] - p[c["n"] + i])
            pb.append(p[i])
            ort_out.append(out[-1])
            ort_pb.append(p[i])
    return out, pb, ort_out, ort_pb


def ct_reference(c, x, w, b, out, pb, absolute=False):
    """y = bias + scatter of x*w, in float64 (|x|, |w|, |b| when absolute: the magnitude sum)."""
    if absolute:
        x, w, b = np.abs(x), np.abs(w), None if b is None else np.abs(b)
    n, g = c["n"], c["group"]
    N, C, M = c["batch"], c["C"], c["M"]
    cg, mg = C // g, M // g
    natural = [c["strides"][i] * (c["in"][i] - 1) + c["op"][i] + (c["k"][i] - 1) * c["dilations"][i] + 1
               for i in range(n)]
    full = np.zeros([N, M] + natural)
    xg = x.reshape([N, g, cg] + c["in"])
    wg = w.reshape([g, cg, mg] + c["k"])
    for kidx in np.ndindex(*c["k"]):
        contrib = np.einsum("ngc...,gcm->ngm...", xg, wg[(slice(None),) * 3 + kidx])
        sl = tuple(slice(kidx[i] * c["dilations"][i],
                         kidx[i] * c["dilations"][i] + (c["in"][i] - 1) * c["strides"][i] + 1,
                         c["strides"][i]) for i in range(n))
        full[(slice(None), slice(None)) + sl] += contrib.reshape([N, M] + c["in"])
    # output position o is natural position o + pad_begin (zero outside [0, natural))
    y = np.zeros([N, M] + out)
    src, dst = [], []
    for i in range(n):
        lo, hi = max(0, -pb[i]), min(out[i], natural[i] - pb[i])
        if hi <= lo:
            return y + (0 if b is None else b.reshape([1, M] + [1] * n))
        dst.append(slice(lo, hi))
        src.append(slice(lo + pb[i], hi + pb[i]))
    y[(slice(None), slice(None)) + tuple(dst)] = full[(slice(None), slice(None)) + tuple(src)]
    if b is not None:
        y += b.reshape([1, M] + [1] * n)
    return y


def ct_random(rng, case):
    version = rng.choice([1, 11, 22])
    opset = {1: rng.choice([7, 9, 10]), 11: rng.choice([11, 13, 17, 21]), 22: 22}[version]
    dtype = rng.choice([FLOAT] * 5 + [FLOAT16] * 2 + [DOUBLE] + ([BFLOAT16] if version == 22 else []))
    n = rng.choice([1, 1, 2, 2, 2, 3])
    group = rng.choice([1, 1, 1, 2, 3])
    cg = 1 if rng.random() < 0.2 else rng.randint(1, 3)
    mg = rng.randint(1, 3)
    c = {"op_type": "ConvTranspose", "case": case, "version": version, "opset": opset,
         "dtype": dtype, "n": n, "group": group, "C": cg * group, "M": mg * group,
         "batch": rng.randint(1, 2), "in": [], "k": [], "strides": [], "dilations": [], "op": [],
         "pads": None, "auto_pad": "NOTSET", "output_shape": None, "os_full": False,
         "bias": rng.random() < 0.6, "w_init": rng.random() < 0.5}
    for _ in range(n):
        c["in"].append(rng.randint(1, {1: 8, 2: 5, 3: 3}[n]))
        c["k"].append(rng.randint(1, 3 if n == 3 else 4))
        s = rng.choice([1, 1, 2, 2, 3, 4])
        d = rng.choice([1, 1, 1, 2, 3])
        c["strides"].append(s)
        c["dilations"].append(d)
        c["op"].append(0 if rng.random() < 0.6 else rng.randint(0, max(s, d) - 1))
    mode = rng.random()
    if mode < 0.3:
        c["pads"] = []
        ends = []
        for i in range(n):
            natural = c["strides"][i] * (c["in"][i] - 1) + c["op"][i] + (c["k"][i] - 1) * c["dilations"][i] + 1
            b = rng.randint(0, min(2, natural - 1))
            e = rng.randint(0, min(2, natural - 1 - b))
            c["pads"].append(b)
            ends.append(e)
        c["pads"] += ends
    elif mode < 0.6:
        c["auto_pad"] = rng.choice(["SAME_UPPER", "SAME_LOWER", "VALID"])
    elif mode < 0.95:
        c["auto_pad"] = rng.choice(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
        c["output_shape"] = []
        for i in range(n):
            natural = c["strides"][i] * (c["in"][i] - 1) + c["op"][i] + (c["k"][i] - 1) * c["dilations"][i] + 1
            c["output_shape"].append(max(1, natural + rng.randint(-3, 2)))
        c["os_full"] = rng.random() < 0.15
    return c


def ct_write(c, rng, path):
    n, dt = c["n"], c["dtype"]
    xdims = [c["batch"], c["C"]] + c["in"]
    wdims = [c["C"], c["M"] // c["group"]] + c["k"]
    x = np.array([rng.uniform(-1, 1) for _ in range(int(np.prod(xdims)))]).reshape(xdims)
    w = np.array([rng.uniform(-1, 1) for _ in range(int(np.prod(wdims)))]).reshape(wdims)
    b = np.array([rng.uniform(-1, 1) for _ in range(c["M"])]) if c["bias"] else None
    xs, x = encode(x, dt)
    ws, w = encode(w, dt)
    if b is not None:
        bs, b = encode(b, dt)
    inits, feeds, graph_inputs = [], [], [helper.make_tensor_value_info("x", dt, xdims)]
    feeds.append(("x", dt, xdims, xs))
    if c["w_init"]:
        inits.append(tensor_proto("w", dt, wdims, ws))
    else:
        graph_inputs.append(helper.make_tensor_value_info("w", dt, wdims))
        feeds.append(("w", dt, wdims, ws))
    if b is not None:
        inits.append(tensor_proto("b", dt, [c["M"]], bs))
    attrs = {}
    if any(s != 1 for s in c["strides"]) or rng.random() < 0.3:
        attrs["strides"] = c["strides"]
    if any(d != 1 for d in c["dilations"]) or rng.random() < 0.3:
        attrs["dilations"] = c["dilations"]
    if any(c["op"]):
        attrs["output_padding"] = c["op"]
    if c["group"] != 1:
        attrs["group"] = c["group"]
    if c["pads"]:
        attrs["pads"] = c["pads"]
    if c["auto_pad"] != "NOTSET" or rng.random() < 0.2:
        attrs["auto_pad"] = c["auto_pad"]
    if rng.random() < 0.3:
        attrs["kernel_shape"] = c["k"]
    if c["output_shape"]:
        attrs["output_shape"] = ([c["batch"], c["M"]] if c["os_full"] else []) + c["output_shape"]
    node = helper.make_node("ConvTranspose", ["x", "w"] + (["b"] if c["bias"] else []), ["y"], name="ct", **attrs)
    graph = helper.make_graph([node], "g", graph_inputs, [helper.make_tensor_value_info("y", dt, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", c["opset"])])
    model.ir_version = 8
    onnx.save(model, os.path.join(path, "model.onnx"))
    out, pb, ort_out, ort_pb = ct_geometry(c)
    c.update(attrs=attrs, out=out, pad_begin=pb, ort_out=ort_out, ort_pad_begin=ort_pb)
    ref = ct_reference(c, x, w, b, out, pb)
    mag = ct_reference(c, x, w, b, out, pb, absolute=True)
    # the same computation with ONNX Runtime's documented geometry (negative totals clamped)
    ort_ref = ct_reference(c, x, w, b, ort_out, ort_pb)
    ort_mag = ct_reference(c, x, w, b, ort_out, ort_pb, absolute=True)
    np.savez(os.path.join(path, "ref.npz"), ref=ref, mag=mag, ort_ref=ort_ref, ort_mag=ort_mag)
    return feeds


# ---- DepthToSpace ---------------------------------------------------------------------------

def d2s_random(rng, case):
    version = rng.choice([1, 11, 13])
    opset = {1: rng.choice([7, 9, 10]), 11: rng.choice([11, 12]), 13: rng.choice([13, 17, 21])}[version]
    b = rng.choice([1, 2, 2, 3, 4])
    dims = [rng.randint(1, 2), rng.randint(1, 3) * b * b, rng.randint(1, 4), rng.randint(1, 4)]
    dtypes = [t for t in range(1, 17) if t != BFLOAT16 or version >= 13]
    dtypes += [FLOAT, FLOAT, FLOAT16, FLOAT16, DOUBLE, 2, 3]  # the types ORT runs, more often
    return {"op_type": "DepthToSpace", "case": case, "version": version, "opset": opset,
            "dtype": rng.choice(dtypes), "blocksize": b, "dims": dims,
            "mode": None if version == 1 else rng.choice([None, "DCR", "CRD"])}


def d2s_reference(c, x):
    N, C, H, W = c["dims"]
    b = c["blocksize"]
    if c["mode"] == "CRD":
        t = x.reshape(N, C // (b * b), b, b, H, W).transpose(0, 1, 4, 2, 5, 3)
    else:
        t = x.reshape(N, b, b, C // (b * b), H, W).transpose(0, 3, 4, 1, 5, 2)
    return t.reshape(N, C // (b * b), H * b, W * b)


def d2s_write(c, rng, path):
    dt, dims = c["dtype"], c["dims"]
    count = int(np.prod(dims))
    if dt == STRING:
        x = np.array(["".join(rng.choice("abcxyz019") for _ in range(rng.randint(0, 4))) for _ in range(count)],
                     dtype=object).reshape(dims)
    elif dt == BOOL:
        x = np.array([rng.randint(0, 1) for _ in range(count)], dtype=np.uint8).reshape(dims)
    else:
        nbytes = count * np.dtype(NP[dt]).itemsize
        x = np.frombuffer(bytes(rng.randint(0, 255) for _ in range(nbytes)), NP[dt]).reshape(dims)
    attrs = {"blocksize": c["blocksize"]}
    if c["mode"]:
        attrs["mode"] = c["mode"]
    node = helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", dt, dims)],
                              [helper.make_tensor_value_info("y", dt, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", c["opset"])])
    model.ir_version = 8
    onnx.save(model, os.path.join(path, "model.onnx"))
    ref = d2s_reference(c, x)
    c["out"] = list(ref.shape)
    if dt == STRING:
        with open(os.path.join(path, "ref.json"), "w") as f:
            json.dump(ref.reshape(-1).tolist(), f)
    else:
        np.save(os.path.join(path, "ref.npy"), ref)
    return [("x", dt, dims, x.reshape(-1).tolist() if dt == STRING else x)]


# ---- driver -----------------------------------------------------------------------------------

def gen(count, root, seed):
    rng = random.Random(seed)
    os.makedirs(root, exist_ok=True)
    for case in range(count):
        path = os.path.join(root, "%04d" % case)
        os.makedirs(path, exist_ok=True)
        c = ct_random(rng, case) if rng.random() < 0.7 else d2s_random(rng, case)
        feeds = ct_write(c, rng, path) if c["op_type"] == "ConvTranspose" else d2s_write(c, rng, path)
        meta = []
        for i, (name, dt, dims, data) in enumerate(feeds):
            with open(os.path.join(path, "input_%d.pb" % i), "wb") as f:
                f.write(tensor_proto(name, dt, dims, data).SerializeToString())
            entry = {"name": name, "dims": dims, "type": ORT_TYPES.get(dt)}
            if dt == STRING:
                entry["strings"] = data
            else:
                entry["file"] = "input_%d.bin" % i
                with open(os.path.join(path, entry["file"]), "wb") as f:
                    f.write(np.ascontiguousarray(data).tobytes())
            meta.append(entry)
        with open(os.path.join(path, "ort_inputs.json"), "w") as f:
            json.dump(meta, f)
        with open(os.path.join(path, "config.json"), "w") as f:
            json.dump(c, f)


if __name__ == "__main__" and sys.argv[1] == "gen":
    gen(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1)
elif __name__ == "__main__" and sys.argv[1] == "classify":
    from classify import classify_all
    classify_all(sys.argv[2], sys.argv[3])
