"""Classification of cross-check cases (see crosscheck.py) and the markdown summary."""
import collections
import json
import os

import numpy as np
from onnx import TensorProto

from crosscheck import BFLOAT16, DOUBLE, FLOAT16, NAMES, NP, STRING, bf16_value


def gamma(j, u):
    return j * u / (1 - j * u)


def ct_bound(c, ref, mag):
    """Rounding bound of one implementation vs the exact result (see test_op_graph_random.c):
    gamma(p+1) * sum of magnitudes, p <= C/group * prod(k) products per element; float16 /
    bfloat16 add one rounding to the storage type. Plus the float64 reference's own error."""
    p = c["C"] // c["group"] * int(np.prod(c["k"]))
    u = 2.0 ** -53 if c["dtype"] == DOUBLE else 2.0 ** -24
    acc = mag * (gamma(p + 1, u) + gamma(p + 1, 2.0 ** -53))
    if c["dtype"] == FLOAT16:
        return acc + 2.0 ** -11 * (np.abs(ref) + acc) + 2.0 ** -25
    if c["dtype"] == BFLOAT16:
        return acc + 2.0 ** -8 * (np.abs(ref) + acc) + 2.0 ** -134
    return acc


def as_values(raw, dtype):
    if dtype == FLOAT16:
        return np.frombuffer(raw, np.float16).astype(np.float64)
    if dtype == BFLOAT16:
        return bf16_value(np.frombuffer(raw, np.uint16))
    return np.frombuffer(raw, NP[dtype]).astype(np.float64)


def read_onnxrun(path, c):
    """(dims, raw bytes or list of strings) or (None, error message)."""
    pb = os.path.join(path, "onnxrun_out", "output_0.pb")
    if not os.path.exists(pb):
        with open(os.path.join(path, "onnxrun.err"), errors="replace") as f:
            return None, f.read().strip()
    t = TensorProto()
    with open(pb, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type == STRING:
        return list(t.dims), [s.decode() for s in t.string_data]
    return list(t.dims), t.raw_data


def read_ort(path):
    """('skip'|'error', message) or ('ok', (dims, raw bytes or list of strings))."""
    for name, kind in (("ort_skip.txt", "skip"), ("ort_error.txt", "error")):
        p = os.path.join(path, name)
        if os.path.exists(p):
            with open(p, errors="replace") as f:
                return kind, f.read().strip().splitlines()[0][:300]
    with open(os.path.join(path, "ort.json")) as f:
        info = json.load(f)
    if info["type"] == "string":
        return "ok", (info["dims"], info["strings"])
    with open(os.path.join(path, "ort_out.bin"), "rb") as f:
        return "ok", (info["dims"], f.read())


def ct_matches(c, dims, raw, ref, mag):
    if dims != list(ref.shape):
        return False
    got = as_values(raw, c["dtype"]).reshape(ref.shape)
    return bool(np.all(np.abs(got - ref) <= ct_bound(c, ref, mag)))


def d2s_matches(c, dims, data, path):
    if dims != c["out"]:
        return False
    if c["dtype"] == STRING:
        with open(os.path.join(path, "ref.json")) as f:
            return data == json.load(f)
    ref = np.load(os.path.join(path, "ref.npy"))
    return bytes(data) == np.ascontiguousarray(ref).tobytes()


def nan_patterns_only(c, dims, data, path):
    """float16: every difference is a NaN of the reference that ORT returns as a NaN of the same
    sign with other fraction bits (quiet bit set, or the payload dropped)."""
    if c["dtype"] != FLOAT16 or dims != c["out"]:
        return False
    ref = np.load(os.path.join(path, "ref.npy")).reshape(-1).view(np.uint16)
    got = np.frombuffer(bytes(data), np.uint16)
    diff = ref != got

    def nan(v):
        return ((v & 0x7C00) == 0x7C00) & ((v & 0x03FF) != 0)
    return bool(np.all(nan(ref[diff]) & nan(got[diff]) & ((ref[diff] ^ got[diff]) & 0x8000 == 0)))


def natural(c, i):
    return c["strides"][i] * (c["in"][i] - 1) + c["op"][i] + (c["k"][i] - 1) * c["dilations"][i] + 1


def explain_ort_error(c, msg):
    """A documented reason for ORT rejecting a valid case, or None."""
    op = c["op_type"]
    if "Could not find an implementation" in msg:
        return "ORT CPU has no %s kernel for the dtype (see the kernel-gap table)" % op
    if op != "ConvTranspose":
        return None
    n = c["n"]
    big_op = any(c["op"][i] >= c["strides"][i] for i in range(n))
    os_big = c["output_shape"] and any(c["output_shape"][i] > natural(c, i) for i in range(n))
    if "Attribute output_shape has incorrect size" in msg and c["os_full"]:
        return "ORT rejects output_shape in the full (N, C, spatial) form"
    if ("may be too large for stride" in msg or "Explicit output_shape is inconsistent" in msg) and big_op:
        return "ORT rejects output_padding >= stride (the spec allows it below the dilation)"
    if "Explicit output_shape is inconsistent" in msg and os_big:
        return "ORT rejects output_shape larger than the natural size (negative total padding)"
    return None


def classify(path):
    with open(os.path.join(path, "config.json")) as f:
        c = json.load(f)
    ours_dims, ours = read_onnxrun(path, c)
    kind, ort = read_ort(path)
    ct = c["op_type"] == "ConvTranspose"
    r = {"config": c, "ours_dims": ours_dims, "ours_error": ours if ours_dims is None else None,
         "ort_kind": kind, "ort_dims": ort[0] if kind == "ok" else None,
         "ort_msg": ort if kind != "ok" else None}
    if ct:
        z = np.load(os.path.join(path, "ref.npz"))
    if ours_dims is None:
        ours_ok = False
    elif ct:
        ours_ok = ct_matches(c, ours_dims, ours, z["ref"], z["mag"])
    else:
        ours_ok = d2s_matches(c, ours_dims, ours, path)
    r["ours_ok"] = ours_ok
    if not ours_ok:
        r["class"], r["reason"] = "disagree-unexplained", "onnxrun differs from the spec reference"
        return r
    if kind == "skip":
        r["class"], r["reason"] = "not-compared", "onnxruntime-node has no %s tensors" % NAMES[c["dtype"]]
        return r
    if kind == "error":
        reason = explain_ort_error(c, ort)
        r["class"] = "disagree-documented" if reason else "disagree-unexplained"
        r["reason"] = reason or "ORT error: " + ort
        return r
    dims, data = ort
    if ct:
        if ct_matches(c, dims, data, z["ref"], z["mag"]):
            r["class"] = "agree"
        elif ct_matches(c, dims, data, z["ort_ref"], z["ort_mag"]):
            r["class"] = "disagree-documented"
            r["reason"] = "ORT clamps a negative total padding to 0 (SAME_* with stride > dilated kernel extent)"
        else:
            r["class"], r["reason"] = "disagree-unexplained", "ORT output differs from both geometries"
    else:
        ok = d2s_matches(c, dims, data if c["dtype"] == STRING else bytearray(data), path)
        r["class"] = "agree" if ok else "disagree-unexplained"
        if not ok and nan_patterns_only(c, dims, data, path):
            r["class"] = "disagree-documented"
            r["reason"] = ("ORT changes NaN bit patterns in float16 DepthToSpace (quiets signalling "
                           "NaNs or drops the payload; same sign); every other element is bit-identical")
        elif not ok:
            r["reason"] = "ORT output differs from the spec reference"
    return r


def describe(c):
    if c["op_type"] == "ConvTranspose":
        x = [c["batch"], c["C"]] + c["in"]
        w = [c["C"], c["M"] // c["group"]] + c["k"]
        attrs = ", ".join("%s=%s" % (k, v) for k, v in sorted(c["attrs"].items()))
        return "ConvTranspose-%d %s X%s W%s%s: %s" % (c["version"], NAMES[c["dtype"]], x, w,
                                                    " +B" if c["bias"] else "", attrs or "defaults")
    return "DepthToSpace-%d %s X%s blocksize=%d mode=%s" % (c["version"], NAMES[c["dtype"]], c["dims"],
                                                          c["blocksize"], c["mode"] or "(default DCR)")


def classify_all(root, out_md):
    results = [classify(os.path.join(root, d)) for d in sorted(os.listdir(root))
               if os.path.exists(os.path.join(root, d, "config.json"))]
    classes = collections.Counter(r["class"] for r in results)
    reasons = collections.Counter((r["class"], r.get("reason")) for r in results if r["class"] != "agree")
    examples = {}
    for r in results:
        key = (r["class"], r.get("reason"))
        if key not in examples or len(describe(r["config"])) < len(describe(examples[key]["config"])):
            examples[key] = r
    by_op = collections.defaultdict(collections.Counter)
    for r in results:
        c = r["config"]
        by_op["%s %s" % (c["op_type"], NAMES[c["dtype"]])][r["class"]] += 1
    order = ["agree", "disagree-documented", "disagree-unexplained", "not-compared"]
    lines = ["# Cross-check: onnxrun vs ONNX Runtime", "",
             "Generated by `bash tests/crosscheck/run.sh %d` (onnxruntime-node %s, CPU). Every case is "
             "also checked against a float64 numpy reference written from the ONNX spec; \"agree\" means "
             "both runtimes match it (ConvTranspose within the rounding bound, DepthToSpace bit for bit)."
             % (len(results), ort_version()), "",
             "| class | cases |", "|---|---|"]
    lines += ["| %s | %d |" % (k, classes.get(k, 0)) for k in order]
    lines += ["", "## Reasons", "", "| class | reason | cases |", "|---|---|---|"]
    lines += ["| %s | %s | %d |" % (k, v, n) for (k, v), n in sorted(reasons.items(), key=lambda t: (order.index(t[0][0]), -t[1]))]
    lines += ["", "## One example per reason (the smallest)", ""]
    for (k, v), r in sorted(examples.items(), key=lambda t: (order.index(t[0][0]), str(t[0][1]))):
        c = r["config"]
        ort = ("output %s" % r["ort_dims"]) if r["ort_kind"] == "ok" else "%s: %s" % (r["ort_kind"], r["ort_msg"])
        ours = ("output %s" % r["ours_dims"]) if r["ours_dims"] is not None else "error: %s" % r["ours_error"]
        lines.append("- **%s%s** (case %04d): %s. onnxrun: %s (spec reference %s). ORT: %s." % (
            k, " - " + v if v else "", c["case"], describe(c), ours,
            ([c["batch"], c["M"]] + c["out"]) if c["op_type"] == "ConvTranspose" else c["out"], ort))
    gaps = collections.defaultdict(set)
    for r in results:
        if r["class"] == "disagree-documented" and "kernel for the dtype" in r.get("reason", ""):
            c = r["config"]
            gaps["%s-%d (opset %s)" % (c["op_type"], c["version"], "1-10" if c["version"] == 1 else
                                      "11-12" if c["version"] == 11 and c["op_type"] == "DepthToSpace" else
                                      "11-21" if c["version"] == 11 else "%d+" % c["version"])].add(NAMES[c["dtype"]])
    lines += ["", "## Kernel gaps seen (\"Could not find an implementation\")", "", "| ORT op version | dtypes onnxrun runs and ORT CPU rejects |", "|---|---|"]
    lines += ["| %s | %s |" % (k, ", ".join(sorted(v))) for k, v in sorted(gaps.items())]
    lines += ["", "## Per op and dtype", "", "| op dtype | " + " | ".join(order) + " |",
              "|---|" + "---|" * len(order)]
    for key in sorted(by_op):
        lines.append("| %s | %s |" % (key, " | ".join(str(by_op[key].get(k, 0)) for k in order)))
    with open(out_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[:12]))
    return classes.get("disagree-unexplained", 0)


def ort_version():
    p = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node_modules", "onnxruntime-node", "package.json")
    try:
        with open(p) as f:
            return json.load(f)["version"]
    except OSError:
        return "?"
