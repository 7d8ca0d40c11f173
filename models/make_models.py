#!/usr/bin/python3
"""Generate onnxrun's example models and their test data.

Run from anywhere:   /usr/bin/python3 models/make_models.py

Needs only Debian's python3-onnx (1.12) and python3-numpy.  For every model it
writes models/<name>/model.onnx and models/<name>/test_data_set_<k>/input_<i>.pb,
output_<i>.pb (TensorProto, name = graph input/output name).

Expected outputs are NOT produced by any ONNX runtime.  They come from the plain
reference in this file, written from the ONNX operator spec:

  * ConvTranspose: a direct scatter loop,
        out[n, g*Mg + m, i*s - pad_begin + k*d] += x[n, g*Cg + c, i] * w[g*Cg + c, m, k]
    plus bias, with output size and pads from the spec's equations (floor
    division for the begin/end split, see docs/design.md, 'ConvTranspose semantics');
  * DepthToSpace: the spec's reshape/transpose formulas for DCR and CRD.

Every model's values (graph outputs and every intermediate) are cross-checked
against a second, differently written formulation:

  * ConvTranspose: dilate the input with (s-1) zeros, pad by (k-1)*d, correlate
    with the flipped kernel (vectorised per tap with einsum), then append
    output_padding zeros and crop/extend by the begin pad;
  * DepthToSpace: explicit per-element index formula loops.

The second formulation is run twice: in float64 (must agree tightly with the
reference) and in plain float32 arithmetic with a different summation order
(must pass the comparison onnxrun's CLI uses, rtol 1e-3 / atol 1e-7, with a
wide margin), so the expected files are not fragile against a correct
float32 implementation.

Deterministic: each model has its own fixed numpy.random.RandomState seed
(the legacy generator, whose stream numpy keeps stable).
"""

import itertools
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

# CLI comparison defaults (docs/design.md, 'Command-line contract'), for the float32 margin check.
CLI_RTOL = 1e-3
CLI_ATOL = 1e-7

# IR version that matches each opset (ONNX versioning table).
IR_FOR_OPSET = {1: 3, 7: 3, 9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8,
                16: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10, 22: 10}


# --------------------------------------------------------------------------
# ConvTranspose geometry (ONNX spec; docs/design.md, 'ConvTranspose semantics')
# --------------------------------------------------------------------------

def conv_transpose_geometry(in_spatial, kernel, a):
    """Return (out_spatial, pads_begin) for one ConvTranspose node.

    `a` is the dict of the node's attributes with defaults filled in."""
    n = len(in_spatial)
    s, d, op = a["strides"], a["dilations"], a["output_padding"]
    pads, auto_pad, output_shape = a["pads"], a["auto_pad"], a["output_shape"]
    if output_shape is not None and len(output_shape) == n + 2:
        output_shape = output_shape[2:]          # full (N, C, ...) form
    out, begin = [], []
    for i in range(n):
        if op[i] >= max(s[i], d[i]):
            raise ValueError("output_padding must be < max(stride, dilation)")
        natural = s[i] * (in_spatial[i] - 1) + op[i] + (kernel[i] - 1) * d[i] + 1
        target = None
        if output_shape is not None:
            target = output_shape[i]
        elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            target = in_spatial[i] * s[i]
        if target is not None:
            total = natural - target
            if auto_pad == "SAME_UPPER":
                b = total // 2                   # Python // is floor division
                e = total - b
            else:
                e = total // 2
                b = total - e
        elif auto_pad == "VALID":
            b = e = 0
        else:
            b, e = pads[i], pads[i + n]
        out.append(natural - b - e)
        begin.append(b)
    return out, begin


def conv_transpose_attrs(node, x_rank, w_shape):
    n = x_rank - 2
    a = {at.name: helper.get_attribute_value(at) for at in node.attribute}
    if isinstance(a.get("auto_pad"), bytes):
        a["auto_pad"] = a["auto_pad"].decode()
    res = {
        "strides": list(a.get("strides", [1] * n)),
        "dilations": list(a.get("dilations", [1] * n)),
        "pads": list(a.get("pads", [0] * (2 * n))),
        "output_padding": list(a.get("output_padding", [0] * n)),
        "group": int(a.get("group", 1)),
        "auto_pad": a.get("auto_pad", "NOTSET"),
        "output_shape": list(a["output_shape"]) if "output_shape" in a else None,
    }
    if "kernel_shape" in a:
        assert list(a["kernel_shape"]) == list(w_shape[2:]), "kernel_shape != W dims"
    return res


# --------------------------------------------------------------------------
# Reference 1 (the one that writes the expected files): plain scatter loop
# --------------------------------------------------------------------------

def conv_transpose_scatter(x, w, b, a):
    N, C = x.shape[:2]
    in_sp = x.shape[2:]
    k_sp = w.shape[2:]
    G = a["group"]
    Cg, Mg = C // G, w.shape[1]
    assert C % G == 0 and w.shape[0] == C
    out_sp, pb = conv_transpose_geometry(in_sp, k_sp, a)
    s, d = a["strides"], a["dilations"]
    xl = x.astype(np.float64).tolist()   # Python floats: exact float64 products/sums
    wl = w.astype(np.float64).tolist()
    out = np.zeros((N, G * Mg) + tuple(out_sp), dtype=np.float64)
    for n in range(N):
        for g in range(G):
            for c in range(Cg):
                ci = g * Cg + c
                for i in itertools.product(*[range(v) for v in in_sp]):
                    xv = xl[n][ci]
                    for v in i:
                        xv = xv[v]
                    for m in range(Mg):
                        for k in itertools.product(*[range(v) for v in k_sp]):
                            o = tuple(i[t] * s[t] - pb[t] + k[t] * d[t]
                                      for t in range(len(i)))
                            if all(0 <= o[t] < out_sp[t] for t in range(len(o))):
                                wv = wl[ci][m]
                                for v in k:
                                    wv = wv[v]
                                out[(n, g * Mg + m) + o] += xv * wv
    if b is not None:
        out += b.astype(np.float64).reshape((1, -1) + (1,) * len(out_sp))
    return out


def depth_to_space_spec(x, blocksize, mode):
    """The spec's reshape/transpose formulas."""
    b, c, h, w = x.shape
    B = blocksize
    if mode == "DCR":
        tmp = np.reshape(x, [b, B, B, c // (B * B), h, w])
        tmp = np.transpose(tmp, [0, 3, 4, 1, 5, 2])
    else:
        tmp = np.reshape(x, [b, c // (B * B), B, B, h, w])
        tmp = np.transpose(tmp, [0, 1, 4, 2, 5, 3])
    return np.reshape(tmp, [b, c // (B * B), h * B, w * B])


# --------------------------------------------------------------------------
# Reference 2 (cross-check only): dilate + flipped-kernel correlation; index loops
# --------------------------------------------------------------------------

def conv_transpose_correlate(x, w, b, a, dtype):
    N, C = x.shape[:2]
    nd = x.ndim - 2
    in_sp, k_sp = x.shape[2:], w.shape[2:]
    G = a["group"]
    Cg, Mg = C // G, w.shape[1]
    s, d, op = a["strides"], a["dilations"], a["output_padding"]
    out_sp, pb = conv_transpose_geometry(in_sp, k_sp, a)
    x = x.astype(dtype)
    w = w.astype(dtype)
    # 1. dilate the input: (s-1) zeros between samples
    dil_sp = [(in_sp[t] - 1) * s[t] + 1 if in_sp[t] > 0 else 0 for t in range(nd)]
    xd = np.zeros((N, C) + tuple(dil_sp), dtype=dtype)
    xd[(slice(None), slice(None)) + tuple(slice(None, None, s[t]) for t in range(nd))] = x
    # 2. pad by the dilated kernel extent minus one on both sides
    ext = [(k_sp[t] - 1) * d[t] for t in range(nd)]
    xp = np.pad(xd, [(0, 0), (0, 0)] + [(e, e) for e in ext])
    full_sp = [dil_sp[t] + ext[t] for t in range(nd)]
    # 3. correlate with the spatially flipped kernel, one tap at a time
    wf = w[(slice(None), slice(None)) + (slice(None, None, -1),) * nd]
    full = np.zeros((N, G * Mg) + tuple(full_sp), dtype=dtype)
    for g in range(G):
        xg = xp[:, g * Cg:(g + 1) * Cg]
        wg = wf[g * Cg:(g + 1) * Cg]
        for k in itertools.product(*[range(v) for v in k_sp]):
            win = xg[(slice(None), slice(None)) +
                     tuple(slice(k[t] * d[t], k[t] * d[t] + full_sp[t]) for t in range(nd))]
            full[:, g * Mg:(g + 1) * Mg] += np.einsum(
                "nc...,cm->nm...", win, wg[(slice(None), slice(None)) + k])
    # 4. output_padding: zeros appended at the end of each axis
    full = np.pad(full, [(0, 0), (0, 0)] + [(0, op[t]) for t in range(nd)])
    # 5. crop (positive pad) or extend with zeros (negative pad) from the begin side
    for t in range(nd):
        ax = 2 + t
        lo = pb[t]
        if lo < 0:
            full = np.concatenate([np.zeros(full.shape[:ax] + (-lo,) + full.shape[ax + 1:],
                                            dtype=dtype), full], axis=ax)
            lo = 0
        need = lo + out_sp[t] - full.shape[ax]
        if need > 0:
            full = np.concatenate([full, np.zeros(full.shape[:ax] + (need,) +
                                                  full.shape[ax + 1:], dtype=dtype)], axis=ax)
        full = np.take(full, np.arange(lo, lo + out_sp[t]), axis=ax)
    if b is not None:
        full = full + b.astype(dtype).reshape((1, -1) + (1,) * nd)
    return full


def depth_to_space_loops(x, blocksize, mode):
    n_, c_, h_, w_ = x.shape
    B = blocksize
    co = c_ // (B * B)
    y = np.empty((n_, co, h_ * B, w_ * B), dtype=x.dtype)
    for n in range(n_):
        for c in range(co):
            for h in range(h_ * B):
                for w in range(w_ * B):
                    bh, bw = h % B, w % B
                    if mode == "DCR":
                        ci = (bh * B + bw) * co + c
                    else:
                        ci = c * B * B + bh * B + bw
                    y[n, c, h, w] = x[n, ci, h // B, w // B]
    return y


# --------------------------------------------------------------------------
# A tiny graph walker so the references read the attributes actually stored
# in the model file (nodes are emitted in topological order by this script).
# --------------------------------------------------------------------------

def run_graph(model, feeds, impl, dtype=np.float64):
    """impl: 'ref' (scatter / spec formula) or 'alt' (correlation / index loops).

    Float ConvTranspose results are rounded to the tensor type (float32) at
    every node, as a runtime stores them.  Returns every value by name."""
    opset = {o.domain: o.version for o in model.opset_import}[""]
    vals = dict(feeds)
    for init in model.graph.initializer:
        vals[init.name] = numpy_helper.to_array(init)
    for node in model.graph.node:
        ins = [vals[nm] if nm else None for nm in node.input]
        if node.op_type == "ConvTranspose":
            x, w = ins[0], ins[1]
            b = ins[2] if len(ins) > 2 else None
            a = conv_transpose_attrs(node, x.ndim, w.shape)
            if impl == "ref":
                y = conv_transpose_scatter(x, w, b, a)
            else:
                y = conv_transpose_correlate(x, w, b, a, dtype)
            y = y.astype(x.dtype)
        elif node.op_type == "DepthToSpace":
            a = {at.name: helper.get_attribute_value(at) for at in node.attribute}
            mode = a.get("mode", b"DCR")
            mode = mode.decode() if isinstance(mode, bytes) else mode
            if opset < 11:
                mode = "DCR"
            assert mode in ("DCR", "CRD")
            fn = depth_to_space_spec if impl == "ref" else depth_to_space_loops
            y = fn(ins[0], int(a["blocksize"]), mode)
        else:
            raise ValueError("unsupported op " + node.op_type)
        vals[node.output[0]] = y
    return vals


def cross_check(name, model, feeds):
    """Compute expected outputs with reference 1 and cross-check with reference 2."""
    ref = run_graph(model, feeds, "ref")
    alt64 = run_graph(model, feeds, "alt", np.float64)
    alt32 = run_graph(model, feeds, "alt", np.float32)
    worst = 0.0
    for key, r in ref.items():
        if key in feeds:
            continue
        a64, a32 = alt64[key], alt32[key]
        assert r.shape == a64.shape == a32.shape and r.dtype == a64.dtype, (name, key)
        if np.issubdtype(r.dtype, np.floating):
            np.testing.assert_allclose(a64, r, rtol=1e-6, atol=1e-7,
                                       err_msg="%s: %s disagrees (float64 cross-check)" % (name, key))
            ratio = np.abs(a32.astype(np.float64) - r) / (CLI_ATOL + CLI_RTOL * np.abs(r))
            m = float(ratio.max()) if ratio.size else 0.0
            assert m < 0.25, "%s: %s float32 cross-check uses %.3f of the CLI tolerance" % (name, key, m)
            worst = max(worst, m)
        else:
            assert np.array_equal(a64, r) and np.array_equal(a32, r), (name, key)
    return ref, worst


# --------------------------------------------------------------------------
# Model building helpers
# --------------------------------------------------------------------------

def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def make(graph, opset):
    m = helper.make_model(graph, producer_name="onnxrun models/make_models.py",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = IR_FOR_OPSET[opset]
    return m


def check(model):
    """onnx.checker + strict shape inference, as far as onnx 1.12 allows.

    onnx 1.12 knows IR versions up to 8 and opsets up to 17; a model with a
    newer IR version (opset 22 needs IR 10) is checked as a copy with the IR
    version lowered to 8 (the op schemas used are unchanged)."""
    m = model
    note = ""
    if m.ir_version > onnx.IR_VERSION:
        m = onnx.ModelProto()
        m.CopyFrom(model)
        m.ir_version = onnx.IR_VERSION
        note = " (checked as IR %d copy)" % onnx.IR_VERSION
    onnx.checker.check_model(m, full_check=True)
    # Strip the declared output shapes and let shape inference recompute them;
    # they must match what this script declared.
    bare = onnx.ModelProto()
    bare.CopyFrom(m)
    declared = {o.name: o.type.tensor_type.shape for o in bare.graph.output}
    for o in bare.graph.output:
        o.type.tensor_type.ClearField("shape")
    inferred = onnx.shape_inference.infer_shapes(bare, strict_mode=True)
    for o in inferred.graph.output:
        got = [dd.dim_param or dd.dim_value for dd in o.type.tensor_type.shape.dim]
        want = [dd.dim_param or dd.dim_value for dd in declared[o.name].dim]
        assert got == want, "%s: shape inference says %s, declared %s" % (o.name, got, want)
    return note


def write_case(folder, k, model, feeds, expected):
    case = os.path.join(folder, "test_data_set_%d" % k)
    os.makedirs(case)
    graph_inputs = [i.name for i in model.graph.input
                    if i.name not in {t.name for t in model.graph.initializer}]
    for i, nm in enumerate(graph_inputs):
        with open(os.path.join(case, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(feeds[nm], nm).SerializeToString())
    for i, o in enumerate(model.graph.output):
        with open(os.path.join(case, "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(expected[o.name], o.name).SerializeToString())


def fresh_dir(name):
    folder = os.path.join(HERE, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    return folder


def emit(name, model, cases):
    folder = fresh_dir(name)
    model_path = os.path.join(folder, "model.onnx")
    with open(model_path, "wb") as f:
        f.write(model.SerializeToString())
    note = check(model)
    worst = 0.0
    for k, feeds in enumerate(cases):
        expected, m = cross_check(name, model, feeds)
        worst = max(worst, m)
        for o in model.graph.output:   # declared static dims must match the data
            dims = [dd.dim_value if dd.HasField("dim_value") else None
                    for dd in o.type.tensor_type.shape.dim]
            shape = expected[o.name].shape
            assert len(dims) == len(shape) and all(
                v is None or v == s for v, s in zip(dims, shape)), (name, o.name, shape)
        write_case(folder, k, model, feeds, expected)
    print("%-18s ok%s; float32 cross-check worst %.2g%% of CLI tolerance"
          % (name, note, 100 * worst))


def randn(rng, shape, scale=0.1):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# --------------------------------------------------------------------------
# The models
# --------------------------------------------------------------------------

def upsampler_graph(batch, size, name, w1, b1, w2, b2):
    """image [batch,3,size,size] -> ConvT(3->12,k3,p1) -> D2S(2,CRD) -> ConvT(3->3,k4,s2,p1)."""
    nodes = [
        helper.make_node("ConvTranspose", ["image", "conv1.weight", "conv1.bias"], ["features"],
                         name="conv1", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
        helper.make_node("DepthToSpace", ["features"], ["shuffled"],
                         name="pixel_shuffle", blocksize=2, mode="CRD"),
        helper.make_node("ConvTranspose", ["shuffled", "conv2.weight", "conv2.bias"], ["upscaled"],
                         name="conv2", kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1]),
    ]
    inits = [numpy_helper.from_array(w1, "conv1.weight"), numpy_helper.from_array(b1, "conv1.bias"),
             numpy_helper.from_array(w2, "conv2.weight"), numpy_helper.from_array(b2, "conv2.bias")]
    return helper.make_graph(
        nodes, name,
        [vi("image", TensorProto.FLOAT, [batch, 3, size, size])],
        [vi("upscaled", TensorProto.FLOAT, [batch, 3, 4 * size, 4 * size])],
        initializer=inits)


def upsampler_weights(rng):
    return (randn(rng, (3, 12, 3, 3)), randn(rng, (12,)),
            randn(rng, (3, 3, 4, 4)), randn(rng, (3,)))


def model_upsampler():
    rng = np.random.RandomState(1001)
    g = upsampler_graph(1, 32, "upsampler", *upsampler_weights(rng))
    g.doc_string = "2x super-resolution upsampler: ConvTranspose, DepthToSpace(CRD), ConvTranspose"
    model = make(g, 13)
    image = rng.uniform(0.0, 1.0, (1, 3, 32, 32)).astype(np.float32)
    emit("upsampler", model, [{"image": image}])


def model_symbolic_batch():
    rng = np.random.RandomState(1002)
    g = upsampler_graph("N", 8, "symbolic_batch", *upsampler_weights(rng))
    g.doc_string = "small upsampler with a symbolic batch dimension N"
    model = make(g, 11)
    cases = [{"image": rng.uniform(0.0, 1.0, (2, 3, 8, 8)).astype(np.float32)},
             {"image": rng.uniform(0.0, 1.0, (1, 3, 8, 8)).astype(np.float32)}]
    emit("symbolic_batch", model, cases)


def model_d2s_dcr_int64():
    rng = np.random.RandomState(1003)
    x = rng.randint(-2**62, 2**62, size=(2, 18, 3, 4), dtype=np.int64)
    # values a float64 round trip would corrupt, plus the int64 extremes
    x[0, 0, 0, :] = [np.iinfo(np.int64).min, np.iinfo(np.int64).max, 2**53 + 1, -(2**53) - 1]
    x[1, 17, 2, :] = [0, -1, 1, 9007199254740993]
    g = helper.make_graph(
        [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=3, mode="DCR")],
        "d2s_dcr_int64",
        [vi("x", TensorProto.INT64, [2, 18, 3, 4])],
        [vi("y", TensorProto.INT64, [2, 2, 9, 12])])
    model = make(g, 11)
    emit("d2s_dcr_int64", model, [{"x": x}])


def model_multi_use():
    rng = np.random.RandomState(1004)
    w_up, b_up = randn(rng, (4, 8, 3, 4)), randn(rng, (8,))
    w_ref = randn(rng, (8, 3, 3, 3))
    nodes = [
        # SAME_UPPER, stride 2: H total padding 1 (odd: begin 0, end 1), W total 2
        helper.make_node("ConvTranspose", ["x", "up.weight", "up.bias"], ["t"], name="up",
                         auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("DepthToSpace", ["t"], ["y1"], name="d2s", blocksize=2),  # default DCR
        # no bias; asymmetric pads; output_padding [1, 2] < strides [2, 3]
        helper.make_node("ConvTranspose", ["t", "refine.weight"], ["y2"], name="refine",
                         kernel_shape=[3, 3], strides=[2, 3], pads=[1, 0, 0, 1],
                         output_padding=[1, 2]),
    ]
    g = helper.make_graph(
        nodes, "multi_use",
        [vi("x", TensorProto.FLOAT, [1, 4, 5, 6])],
        [vi("t", TensorProto.FLOAT, [1, 8, 10, 12]),
         vi("y1", TensorProto.FLOAT, [1, 2, 20, 24]),
         vi("y2", TensorProto.FLOAT, [1, 3, 21, 37])],
        initializer=[numpy_helper.from_array(w_up, "up.weight"),
                     numpy_helper.from_array(b_up, "up.bias"),
                     numpy_helper.from_array(w_ref, "refine.weight")])
    g.doc_string = "t is consumed by two nodes and is also a graph output"
    model = make(g, 22)
    x = rng.uniform(-1.0, 1.0, (1, 4, 5, 6)).astype(np.float32)
    emit("multi_use", model, [{"x": x}])


def model_weights_as_input():
    rng = np.random.RandomState(1005)
    x = rng.standard_normal((2, 4, 9)).astype(np.float32)
    w = randn(rng, (4, 3, 3), 0.5)
    b = randn(rng, (6,), 0.5)
    g = helper.make_graph(
        [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], name="convt1d",
                          group=2, dilations=[2], strides=[3], pads=[2, 1])],
        "weights_as_input",
        [vi("x", TensorProto.FLOAT, [2, 4, 9]),
         vi("w", TensorProto.FLOAT, [4, 3, 3]),
         vi("b", TensorProto.FLOAT, [6])],
        [vi("y", TensorProto.FLOAT, [2, 6, 26])])
    model = make(g, 17)
    emit("weights_as_input", model, [{"x": x, "w": w, "b": b}])


def model_external_data():
    rng = np.random.RandomState(1006)
    w = randn(rng, (2, 4, 3, 3), 0.3)
    b = randn(rng, (4,))
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    offset = 64
    folder = fresh_dir("external_data")
    # weights.bin: 64 bytes of NaN filler, then W as little-endian float32.
    # A loader that ignores 'offset' reads NaNs and fails loudly.
    filler = np.full(offset // 4, np.nan, dtype="<f4").tobytes()
    blob = w.astype("<f4").tobytes()
    with open(os.path.join(folder, "weights.bin"), "wb") as f:
        f.write(filler + blob)
    w_t = TensorProto()
    w_t.name = "weight"
    w_t.data_type = TensorProto.FLOAT
    w_t.dims.extend(w.shape)
    w_t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "weights.bin"), ("offset", str(offset)),
                       ("length", str(len(blob)))):
        e = w_t.external_data.add()
        e.key, e.value = key, value
    g = helper.make_graph(
        # output_shape [10, 9], natural 11 x 11: H total 1 -> begin 1, end 0; W total 2 -> 1, 1
        [helper.make_node("ConvTranspose", ["x", "weight", "bias"], ["y"], name="convt",
                          strides=[2, 2], output_shape=[10, 9])],
        "external_data",
        [vi("x", TensorProto.FLOAT, [1, 2, 5, 5])],
        [vi("y", TensorProto.FLOAT, [1, 4, 10, 9])],
        initializer=[w_t, numpy_helper.from_array(b, "bias")])
    model = make(g, 13)
    model_path = os.path.join(folder, "model.onnx")
    with open(model_path, "wb") as f:
        f.write(model.SerializeToString())
    # Path-based check (validates the external data reference), then reload
    # through onnx's own external-data loader: W must round-trip exactly.
    onnx.checker.check_model(model_path, full_check=True)
    loaded = onnx.load(model_path)
    w_back = numpy_helper.to_array([t for t in loaded.graph.initializer if t.name == "weight"][0])
    assert np.array_equal(w_back, w)
    check(loaded)
    expected, worst = cross_check("external_data", loaded, {"x": x})
    assert expected["y"].shape == (1, 4, 10, 9)
    write_case(folder, 0, model, {"x": x}, expected)
    print("%-18s ok; float32 cross-check worst %.2g%% of CLI tolerance"
          % ("external_data", 100 * worst))


def self_test():
    """Small fixed cases with hand-derived answers, and random configurations
    (pads, negative totals, output_padding, groups, dilations, 1-3 D) where
    the two ConvTranspose formulations must agree."""
    # 1-D, stride 2, k 2, x [1, 2], w [1, 1]: natural 4 -> [1, 1, 2, 2]
    a = {"strides": [2], "dilations": [1], "pads": [0, 0], "output_padding": [0],
         "group": 1, "auto_pad": "NOTSET", "output_shape": None}
    y = conv_transpose_scatter(np.array([[[1.0, 2.0]]]), np.array([[[1.0, 1.0]]]), None, a)
    assert y.tolist() == [[[1.0, 1.0, 2.0, 2.0]]]
    # SAME_UPPER with odd total: natural 5 (in 2, s 2, k 2, op 0 -> 4; k 3 -> 5), out 4
    a2 = dict(a, auto_pad="SAME_UPPER")
    y = conv_transpose_scatter(np.array([[[1.0, 10.0]]]), np.array([[[1.0, 2.0, 3.0]]]), None, a2)
    # full = [1, 2, 3+10, 20, 30]; SAME_UPPER begin = floor(1/2) = 0 -> [1, 2, 13, 20]
    assert y.tolist() == [[[1.0, 2.0, 13.0, 20.0]]], y
    a3 = dict(a, auto_pad="SAME_LOWER")
    y = conv_transpose_scatter(np.array([[[1.0, 10.0]]]), np.array([[[1.0, 2.0, 3.0]]]), None, a3)
    assert y.tolist() == [[[2.0, 13.0, 20.0, 30.0]]], y
    # stride larger than the kernel with SAME: negative total -> zero extension
    a4 = dict(a, strides=[3], auto_pad="SAME_UPPER")
    y = conv_transpose_scatter(np.array([[[1.0, 10.0]]]), np.array([[[1.0]]]), None, a4)
    # natural 4, target 6, total -2: begin -1, end -1 -> [0, 1, 0, 0, 10, 0]
    assert y.tolist() == [[[0.0, 1.0, 0.0, 0.0, 10.0, 0.0]]], y
    # DepthToSpace on the spec's documented example ordering
    x = np.arange(8).reshape(1, 8, 1, 1)
    assert depth_to_space_spec(x, 2, "DCR").ravel().tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert depth_to_space_spec(x, 2, "CRD").ravel().tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    for mode in ("DCR", "CRD"):
        x = np.arange(2 * 18 * 2 * 3).reshape(2, 18, 2, 3)
        assert np.array_equal(depth_to_space_spec(x, 3, mode), depth_to_space_loops(x, 3, mode))
    rng = np.random.RandomState(7)
    for _ in range(150):
        nd = rng.randint(1, 4)
        G = rng.randint(1, 3)
        Cg, Mg = rng.randint(1, 3), rng.randint(1, 3)
        in_sp = [int(v) for v in rng.randint(1, 5, nd)]
        k_sp = [int(v) for v in rng.randint(1, 4, nd)]
        s = [int(v) for v in rng.randint(1, 4, nd)]
        d = [int(v) for v in rng.randint(1, 3, nd)]
        op = [int(rng.randint(0, max(s[t], d[t]))) for t in range(nd)]
        mode = rng.choice(["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "OUTSHAPE"])
        a = {"strides": s, "dilations": d, "output_padding": op, "group": G,
             "auto_pad": "NOTSET" if mode == "OUTSHAPE" else str(mode),
             "pads": [int(v) for v in rng.randint(0, 2, 2 * nd)], "output_shape": None}
        if mode == "OUTSHAPE":
            a["output_shape"] = [int(v) for v in rng.randint(1, 12, nd)]
        out_sp, _ = conv_transpose_geometry(in_sp, k_sp, a)
        if min(out_sp) < 1:
            continue
        x = rng.standard_normal([2, G * Cg] + in_sp)
        w = rng.standard_normal([G * Cg, Mg] + k_sp)
        b = rng.standard_normal(G * Mg) if rng.randint(2) else None
        r = conv_transpose_scatter(x, w, b, a)
        q = conv_transpose_correlate(x, w, b, a, np.float64)
        np.testing.assert_allclose(q, r, rtol=1e-12, atol=1e-12, err_msg=str(a))


def check_conformance(root):
    """Optional: run both formulations over ONNX backend-test style folders
    (e.g. ../shared/conformance) and compare with their expected outputs."""
    import glob
    bad = 0
    for mpath in sorted(glob.glob(os.path.join(root, "**", "model.onnx"), recursive=True)):
        d = os.path.dirname(mpath)
        m = onnx.load(mpath)
        inits = {t.name for t in m.graph.initializer}
        names = [i.name for i in m.graph.input if i.name not in inits]
        for case in sorted(glob.glob(os.path.join(d, "test_data_set_*"))):
            feeds = {n: numpy_helper.to_array(onnx.load_tensor(
                os.path.join(case, "input_%d.pb" % i))) for i, n in enumerate(names)}
            for impl in ("ref", "alt"):
                v = run_graph(m, feeds, impl)
                for i, o in enumerate(m.graph.output):
                    e = numpy_helper.to_array(onnx.load_tensor(
                        os.path.join(case, "output_%d.pb" % i)))
                    ok = v[o.name].shape == e.shape and np.allclose(
                        v[o.name], e, rtol=CLI_RTOL, atol=CLI_ATOL)
                    if not ok:
                        bad += 1
                        print("MISMATCH %s %s %s (%s)" % (d, case, o.name, impl))
            print("conformance %-45s ok" % os.path.relpath(case, root))
    return 1 if bad else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check-conformance":
        return check_conformance(sys.argv[2])
    if len(sys.argv) != 1:
        sys.stderr.write("usage: make_models.py [--check-conformance DIR]\n")
        return 2
    self_test()
    model_upsampler()
    model_symbolic_batch()
    model_d2s_dcr_int64()
    model_multi_use()
    model_weights_as_input()
    model_external_data()
    total = 0
    for root, _, files in os.walk(HERE):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print("models/ total %.1f KiB" % (total / 1024.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
