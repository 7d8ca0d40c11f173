#!/usr/bin/python3
"""Benchmark report helpers for bench/run.sh (run with /usr/bin/python3: needs numpy).

  report.py compare --case NAME [--ref ORT.bin] --got ONNXRUN_T1.bin [--also ONNXRUN_Tn.bin ...]
                    [--dtype float32|float64] [--peer TOOL]
      Prints one JSON line: the oracle check of onnxrun's output against ONNX Runtime's for
      the same input (max abs error, max abs error / max |ref|, flag above 1e-3) and whether
      every other onnxrun thread count gave a bitwise-identical output. Without --ref (no peer
      output: float64 cases), --numpy-ref CASE_DIR computes the reference from that directory's
      model.onnx and input.bin in float64 with numpy (conv_transpose_ref below) and flags a
      relative error above 1e-10; without either, only the bitwise check. With --peer TOOL (dnnl_blocked,
      dnnl_nchw) the line is that peer's output (--got) against onnxrun's (--ref), same rule.

  report.py table --raw RAW.jsonl --models DIR --peak PEAK.json --out DIR [--meta META.json]
      Joins the JSON lines of onnxrun_bench / ort_bench.js / compare, the per-case meta.json
      (FLOPs or bytes) and peak.json into OUT/latest.json and OUT/latest.md, and prints the
      table on stdout.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

ORACLE_TOL = 1e-3  # max |onnxrun - ORT| / max |ORT| above this is a disagreement
# float64 against the numpy float64 reference: summation order alone gives ~1e-14 relative
# on these reductions (up to 8192 terms); anything computed in float32 gives ~1e-7
ORACLE_TOL_F64 = 1e-10


def conv_transpose_ref(x, w, b, attrs):
    """ConvTranspose per the ONNX spec (explicit pads, strides, dilations, output_padding,
    group), in x's dtype: every kernel tap adds x (contracted with that tap's weights over the
    group's input channels) into a strided slice of the full output, which is then cropped by
    the pads."""
    import itertools
    n, c = x.shape[:2]
    sp = x.shape[2:]
    nd = len(sp)
    g = attrs.get("group", 1)
    mg = w.shape[1]
    k = w.shape[2:]
    st = attrs.get("strides", [1] * nd)
    dil = attrs.get("dilations", [1] * nd)
    pads = attrs.get("pads", [0] * (2 * nd))
    opad = attrs.get("output_padding", [0] * nd)
    full = [st[i] * (sp[i] - 1) + opad[i] + (k[i] - 1) * dil[i] + 1 for i in range(nd)]
    y = np.zeros((n, g * mg, *full), dtype=x.dtype)
    xg = x.reshape(n, g, c // g, *sp)
    wg = w.reshape(g, c // g, mg, *k)
    for tap in itertools.product(*[range(kk) for kk in k]):
        contrib = np.einsum("ngc...,gcm->ngm...", xg, wg[(slice(None),) * 3 + tap], optimize=True)
        sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + st[i] * (sp[i] - 1) + 1, st[i]) for i in range(nd))
        y[(slice(None), slice(None)) + sl] += contrib.reshape(n, g * mg, *sp)
    y = y[(slice(None), slice(None)) + tuple(slice(pads[i], full[i] - pads[nd + i]) for i in range(nd))]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * nd)
    return y


def numpy_reference(case_dir, dtype):
    """The reference output of a generated ConvTranspose case (bench/make_models.py's files)."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    with open(os.path.join(case_dir, "meta.json")) as f:
        meta = json.load(f)
    if meta["op"] != "ConvTranspose":
        raise SystemExit(f"--numpy-ref: {case_dir} is not a ConvTranspose case")
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    x = np.fromfile(os.path.join(case_dir, "input.bin"), dtype=dtype).reshape(meta["x"])
    return conv_transpose_ref(x, inits["W"], inits.get("B"), meta["attrs"]).ravel()


def cmd_compare(a):
    dt = "<f8" if a.dtype == "float64" else "<f4"
    got = np.fromfile(a.got, dtype=dt)
    ref = np.fromfile(a.ref, dtype=dt) if a.ref else None
    tol = ORACLE_TOL
    out = {"oracle": a.case}
    if ref is None and a.numpy_ref:
        ref = numpy_reference(a.numpy_ref, dt)
        tol = ORACLE_TOL_F64 if a.dtype == "float64" else ORACLE_TOL
        out["ref"] = f"numpy {a.dtype}"
        out["tol"] = tol
    if a.peer:
        out["peer"] = a.peer
    if ref is None:
        out.update(ok=None, dtype=a.dtype, elements=int(got.size), finite=bool(np.isfinite(got).all()))
    elif ref.size != got.size:
        names = (("onnxrun", a.peer) if a.peer else
                 ("numpy reference", "onnxrun") if out.get("ref") else ("ORT", "onnxrun"))
        out.update(ok=False, error=f"size differs: {names[0]} {ref.size} vs {names[1]} {got.size} elements")
    else:
        finite = bool(np.isfinite(got).all())
        d = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        max_abs = float(d.max()) if d.size else 0.0
        scale = float(np.abs(ref).max()) if ref.size else 0.0
        rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else math.inf)
        out.update(ok=bool(finite and rel <= tol), max_abs=max_abs, max_ref=scale,
                   max_rel=rel, finite=finite, elements=int(ref.size))
    same = []
    for p in a.also or []:
        other = np.fromfile(p, dtype="<u4")
        base = np.fromfile(a.got, dtype="<u4")
        same.append(bool(other.size == base.size and np.array_equal(other, base)))
    if not a.peer:
        out["bitwise_same_across_threads"] = all(same) if same else None
    print(json.dumps(out))


def load_lines(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def peak_at(values, threads, peak_threads):
    """The measured limit for T threads: the 1-thread or all-thread figure when T matches one,
    else T x the 1-thread figure."""
    if values is None:
        return None
    if threads == peak_threads[0]:
        return values[0]
    if threads == peak_threads[-1]:
        return values[-1]
    return values[0] * threads


# every tool of the rounds, in run.sh's order, and how the tables name it
TOOLS = ("onnxrun", "ort", "dnnl_blocked", "dnnl_nchw")
PEERS = ("ort", "dnnl_blocked", "dnnl_nchw")
LABEL = {"onnxrun": "onnxrun", "ort": "ORT", "dnnl_blocked": "oneDNN blocked", "dnnl_nchw": "oneDNN NCHW"}


def fma_limits(peak, prefix):
    """Per-thread-count FMA GFLOP/s, the larger of AVX-512 and AVX2 (prefix fma or fma64)."""
    v512, v256 = peak.get(prefix + "_avx512_gflops"), peak.get(prefix + "_avx2_gflops")
    if v512 and v256:
        return [max(x, y) for x, y in zip(v512, v256)]
    return v512 or v256


def raise_held_fma(peak, rows):
    """peak.c measures each thread count once, at the start of the run: if the host holds a vCPU
    then, its 2-thread FMA figure reads about the 1-thread one and the bound it sets is one the
    run's own measurements beat. The FMA probe taken before every measurement (`peak --probe T`,
    FP32 AVX-512, the rows' fma_probe_gflops) shows what T threads reached in this run: where the
    best probe at T is more than 10% above peak.c's T-thread AVX-512 figure (the probes' own
    spread is a few %), that figure becomes the best probe and the FP64 ones at T are scaled
    by the same factor. Returns {T: (peak.c's figure, the best probe)} for the thread counts
    raised."""
    v512 = peak.get("fma_avx512_gflops")
    if not v512:
        return {}
    raised = {}
    for i, t in enumerate(peak["threads"]):
        best = max((r["fma_probe_gflops"] for r in rows
                    if r.get("threads") == t and r.get("fma_probe_gflops")), default=None)
        if best is None or best <= 1.1 * v512[i]:
            continue
        factor = best / v512[i]
        raised[t] = (v512[i], best)
        v512[i] = best
        for key in ("fma64_avx512_gflops", "fma64_avx2_gflops"):
            if peak.get(key):
                peak[key][i] = round(peak[key][i] * factor, 2)
    return raised


def bandwidth_level(peak, nbytes, threads):
    """The copy bandwidth (GB/s, read + write counted) of the smallest cache level that holds
    nbytes: L2 (T x the per-core size), L3 (shared), else DRAM (the 256 MiB memcpy). The sizes
    are the ones the system reports (peak.json cache_l2_bytes / cache_l3_bytes), or the measured
    copy's footprint when unknown. A level too large by the report (a VM's) only makes the bound
    lower, never one the case cannot meet. Returns (level, GB/s)."""
    pt = peak["threads"]
    levels = []
    if peak.get("copy_l2_gbs") and peak.get("copy_l2_bytes_per_thread"):
        per_core = peak.get("cache_l2_bytes") or 2 * peak["copy_l2_bytes_per_thread"]
        levels.append(("L2", per_core * threads, peak["copy_l2_gbs"]))
    if peak.get("copy_l3_gbs") and peak.get("copy_l3_bytes"):
        levels.append(("L3", peak.get("cache_l3_bytes") or 2 * peak["copy_l3_bytes"], peak["copy_l3_gbs"]))
    for name, cap, values in levels:
        if nbytes <= cap:
            return name, peak_at(values, threads, pt)
    return "DRAM", peak_at(peak["memcpy_gbs"], threads, pt)


def roofline(peak, meta, threads):
    """The roofline time of a case at T threads (ms): the larger of FLOPs / FMA peak (float32 or
    float64 peak as the case) and tensor bytes (X, W, B read, Y written) / the copy bandwidth of
    the level they fit in. Returns (ms, bound) or (None, None) without the figures."""
    pt = peak["threads"]
    dtype = meta.get("dtype", "float32")
    esize = 8 if dtype == "float64" else 4
    nbytes = meta.get("tensor_bytes")
    if nbytes is None:  # models generated before tensor_bytes
        if meta["op"] == "ConvTranspose":
            nb = meta["y"][1] if meta.get("bias") else 0
            nbytes = esize * (math.prod(meta["x"]) + math.prod(meta["w"]) + nb + math.prod(meta["y"]))
        else:
            nbytes = meta["bytes"]
    level, bw = bandwidth_level(peak, nbytes, threads)
    t_mem = nbytes / (bw * 1e6) if bw else None
    t_fma = 0.0
    if meta["op"] == "ConvTranspose":
        fma = peak_at(fma_limits(peak, "fma64" if dtype == "float64" else "fma"), threads, pt)
        t_fma = meta["flops"] / (fma * 1e6) if fma else None
    if t_mem is None or t_fma is None:
        return None, None
    return (t_fma, "compute") if t_fma >= t_mem else (t_mem, "memory " + level)


def fmt_size(v):
    if not v:
        return "unknown"
    return f"{v / 2**20:.0f} MiB" if v >= 2**20 else f"{v / 2**10:.0f} KiB"


def fmt_ms(v):
    if v is None:
        return "—"
    return f"{v:.3f}" if v < 10 else (f"{v:.2f}" if v < 100 else f"{v:.1f}")


def fmt_pct(v):
    if v is None:
        return "—"
    return f"{v:.0f}%" if v >= 10 else f"{v:.2g}%"


def fmt_rounds(r):
    """The range of a measurement's round medians ("a-b"), or its median with one round."""
    if isinstance(r, str):
        return r
    if not r:
        return "—"
    v = r.get("round_medians_ms")
    return "-".join(fmt_ms(x) for x in (min(v), max(v))) if v and len(v) > 1 else fmt_ms(r["median_ms"])


def fmt_num(v, digits=3):
    if v is None:
        return "—"
    return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:.0f}"


# The issue's channel-heavy cases (the 2-thread scaling target applies to them).
CHANNEL_HEAVY = ("dcgan_512_256", "dcgan_256_128", "dcgan_b8", "unet_512_256", "k3s1p1")
SCALING_TARGET = 1.7

SCALING_TEXT = (
    "One process per case holds two sessions of the model, 1 and 2 threads, and alternates their runs "
    "in pairs (the order swapping from pair to pair), so a slow spell of the shared host hits both "
    "thread counts alike; the separate-process rounds above are minutes apart. speedup = 1-thread "
    "median / 2-thread median; per pair = median over the pairs of (1-thread time / 2-thread time). "
    f"Target for the channel-heavy cases: {SCALING_TARGET}x.")


def scaling_table(scaling):
    """Markdown table and rows of the interleaved thread-scaling measurements."""
    rows = []
    for r in scaling:
        heavy = any(r["case"].startswith(p) for p in CHANNEL_HEAVY)
        rows.append({"case": r["case"], "threads": r["threads"], "threads2": r["threads2"],
                     "median_ms": r["median_ms"], "median2_ms": r["median2_ms"],
                     "speedup_median": r["speedup_median"], "speedup_pairs": r["speedup_pairs"],
                     "runs": r["runs"], "channel_heavy": heavy,
                     "other_cpus": r.get("other_cpus")})
    hdr = "| case | threads | median ms (T / T2) | speedup (medians) | speedup (per pair) | channel-heavy target |"
    lines = [hdr, "|---|---|---|---|---|---|"]
    for r in rows:
        tgt = "—"
        if r["channel_heavy"]:
            tgt = ("met" if r["speedup_median"] >= SCALING_TARGET else "**missed**") + f" (>= {SCALING_TARGET})"
        lines.append(f"| {r['case']} | {r['threads']} -> {r['threads2']} | {fmt_ms(r['median_ms'])} / "
                     f"{fmt_ms(r['median2_ms'])} | {r['speedup_median']:.2f} | {r['speedup_pairs']:.2f} | {tgt} |")
    return "\n".join(lines), rows


def cmd_table(a):
    rows = load_lines(a.raw)
    with open(a.peak) as f:
        peak = json.load(f)
    run_meta = {}
    if a.meta and os.path.exists(a.meta):
        with open(a.meta) as f:
            run_meta = json.load(f)
    pt = peak["threads"]
    fma_raised = raise_held_fma(peak, rows)
    fma = fma_limits(peak, "fma")
    fma64 = fma_limits(peak, "fma64")
    bw = peak["memcpy_gbs"]

    by = {}
    oracle = {}
    peer_oracle = {}
    na = {}
    baselines = {}
    order = []
    floors = []
    scaling = []
    for r in rows:
        if r.get("scaling"):
            scaling.append(r)
        elif "floor" in r:
            floors.append(r)
        elif "baseline" in r:
            baselines[r["baseline"]] = r
        elif "oracle" in r:
            if r.get("peer"):
                peer_oracle[(r["oracle"], r["peer"])] = r
            else:
                oracle[r["oracle"]] = r
        elif "na" in r:
            na[(r["case"], r["tool"])] = r["na"]
        elif "tool" in r:
            key = (r["case"], r["threads"])
            if key not in by:
                by[key] = {}
                order.append(key)
            by[key].setdefault("rounds_" + r["tool"], []).append(r)
        elif "failed" in r:
            key = (r["case"], r["threads"])
            if key not in by:
                by[key] = {}
                order.append(key)
            by[key].setdefault("failures", []).append(r)

    # several rounds per tool (BENCH_ROUNDS): report the median round (for an even count the
    # slower of the two middle ones), and keep every round's median
    for ent in by.values():
        for tool in TOOLS + ("case_probe",):
            rounds = sorted(ent.pop("rounds_" + tool, []), key=lambda r: r["median_ms"])
            if rounds:
                pick = dict(rounds[len(rounds) // 2])
                pick["round_medians_ms"] = [r["median_ms"] for r in rounds]
                ent[tool] = pick

    cases = []
    for (name, threads) in order:
        ent = by[(name, threads)]
        with open(os.path.join(a.models, name, "meta.json")) as f:
            meta = json.load(f)
        dtype = meta.get("dtype", "float32")
        o = ent.get("onnxrun")
        t = ent.get("ort")
        c = {"case": name, "op": meta["op"], "dtype": dtype, "threads": threads, "failures": ent.get("failures", [])}
        for tool in TOOLS:
            c[tool] = ent.get(tool)
            if (name, tool) in na:
                c[tool + "_na"] = na[(name, tool)]
        c["ratio"] = (t["median_ms"] / o["median_ms"]) if (o and t and o["median_ms"] > 0) else None
        for peer in PEERS[1:]:
            p = c[peer]
            c["ratio_" + peer] = (p["median_ms"] / o["median_ms"]) if (o and p and o["median_ms"] > 0) else None
        if meta["op"] == "ConvTranspose":
            c["flops"] = meta["flops"]
            lim = peak_at(fma64 if dtype == "float64" else fma, threads, pt)
            c["unit"] = "GFLOP/s"
            work = meta["flops"]
        else:
            c["bytes"] = meta["bytes"]
            lim = peak_at(bw, threads, pt)
            c["unit"] = "GB/s"
            work = meta["bytes"]
        c["limit"] = lim
        for tool in TOOLS:
            r = c[tool]
            c[tool + "_rate"] = work / (r["median_ms"] * 1e6) if r else None
            c[tool + "_pct_peak"] = 100 * c[tool + "_rate"] / lim if c[tool + "_rate"] and lim else None
            # ConvTranspose float32: against the FMA rate probed right before that measurement
            # (run.sh; the probe is float32, so not for float64)
            pr = r.get("fma_probe_gflops") if r else None
            c[tool + "_pct_probe"] = (100 * c[tool + "_rate"] / pr if meta["op"] == "ConvTranspose"
                                      and dtype == "float32" and pr and c[tool + "_rate"] else None)
        c["tensor_bytes"] = meta.get("tensor_bytes")
        c["roofline_ms"], c["roofline_bound"] = roofline(peak, meta, threads)
        for tool in TOOLS:
            r = c[tool]
            c[tool + "_pct_roofline"] = (100 * c["roofline_ms"] / r["median_ms"]
                                         if r and c["roofline_ms"] and r["median_ms"] > 0 else None)
        # the case's unavoidable work alone, same rounds (bench/case_probe.c): onnxrun's time
        # against what this machine does for that work
        cp = ent.get("case_probe")
        c["case_probe_ms"] = cp["median_ms"] if cp else None
        c["onnxrun_pct_case_probe"] = (100 * cp["median_ms"] / o["median_ms"]
                                       if cp and o and o["median_ms"] > 0 else None)
        c["oracle"] = oracle.get(name)
        for peer in PEERS[1:]:
            c["oracle_" + peer] = peer_oracle.get((name, peer))
        cases.append(c)

    others = [c[k]["other_cpus"] for c in cases for k in TOOLS if c[k] and "other_cpus" in c[k]]
    steals = [c[k]["steal_cpus"] for c in cases for k in TOOLS if c[k] and "steal_cpus" in c[k]]
    contention = {
        "other_cpus_mean": sum(others) / len(others) if others else None,
        "other_cpus_max": max(others) if others else None,
        "steal_cpus_mean": sum(steals) / len(steals) if steals else None,
        "busy": bool(others) and sum(others) / len(others) > 0.25,
    }

    def geomean(vals):
        return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None

    geo = {}
    for threads in sorted({c["threads"] for c in cases}):
        rs = [c["ratio"] for c in cases if c["threads"] == threads and c["ratio"]]
        n_all = sum(1 for c in cases if c["threads"] == threads and c["dtype"] == "float32")
        geo[str(threads)] = {"geomean_ratio": geomean(rs), "cases": len(rs), "cases_total": n_all}
        for peer in PEERS[1:]:
            # peer time / onnxrun time over the cases the peer ran
            ps = [c["ratio_" + peer] for c in cases if c["threads"] == threads and c["ratio_" + peer]]
            geo[str(threads)]["geomean_ratio_" + peer] = geomean(ps)
            geo[str(threads)]["cases_" + peer] = len(ps)

    def cell(c, tool, fmt, v):
        """A tool's figure, or n/a when the tool cannot run the case."""
        if c[tool] is None and c.get(tool + "_na"):
            return "n/a"
        return fmt(v)

    def four(c, fmt, key):
        return " / ".join(cell(c, tool, fmt, c[tool + key] if key else c[tool]) for tool in TOOLS)

    # ---- table
    hdr = ["case", "op", "threads", "onnxrun ms", "ORT ms", "oneDNN ms blocked / NCHW", "ratio ORT/onnxrun",
           "ratio oneDNN/onnxrun blocked / NCHW", "roofline ms (bound)",
           "% of roofline onnxrun / ORT / oneDNN blocked / NCHW",
           "case probe ms (onnxrun at)",
           "onnxrun / ORT GFLOP/s or GB/s", "% of measured peak onnxrun / ORT",
           "% of FMA rate probed before the run onnxrun / ORT",
           "peak RSS MB onnxrun / ORT / oneDNN blocked / NCHW", "other load onnxrun / ORT / oneDNN blocked / NCHW",
           "round medians ms onnxrun / ORT / oneDNN blocked / NCHW", "oracle (vs ORT)", "oneDNN vs onnxrun"]
    lines = ["| " + " | ".join(hdr) + " |", "|" + "|".join(["---"] * len(hdr)) + "|"]
    notes = []
    for c in cases:
        o, t = c["onnxrun"], c["ort"]
        ms = {tool: cell(c, tool, fmt_ms, c[tool]["median_ms"] if c[tool] else None) for tool in TOOLS}
        rate = (f"{fmt_num(c['onnxrun_rate'])} / {cell(c, 'ort', fmt_num, c['ort_rate'])} {c['unit']}")
        pct = f"{fmt_pct(c['onnxrun_pct_peak'])} / {cell(c, 'ort', fmt_pct, c['ort_pct_peak'])}"
        probe = f"{fmt_pct(c['onnxrun_pct_probe'])} / {cell(c, 'ort', fmt_pct, c['ort_pct_probe'])}"
        rss = " / ".join(cell(c, tool, lambda r: f"{r['peak_rss_kb'] / 1024:.0f}" if r else "—", c[tool])
                         for tool in TOOLS)
        other = " / ".join(cell(c, tool, lambda r: f"{r['other_cpus']:.1f}" if r and "other_cpus" in r else "—",
                                c[tool]) for tool in TOOLS)
        spread = " / ".join(cell(c, tool, fmt_rounds, c[tool]) for tool in TOOLS)
        orc = c["oracle"]
        if c["threads"] != 1 or orc is None:
            ora = "see T=1" if orc is not None and c["threads"] != 1 else "—"
            if orc is not None and c["threads"] != 1 and orc.get("bitwise_same_across_threads") is False:
                ora = "**T>1 output differs from T=1**"
        elif "error" in orc:
            ora = "**" + orc["error"] + "**"
        elif orc.get("ok") is None:
            ora = "no peer output" + (", T>1 bitwise = T=1" if orc.get("bitwise_same_across_threads") else "")
        else:
            ora = ("ok" if orc["ok"] else "**DISAGREE**") + f" rel {orc['max_rel']:.1e}"
            if orc.get("ref"):
                ora += f" (vs {orc['ref']} reference, tolerance {orc['tol']:.0e})"
        if orc is not None and c["threads"] == 1 and orc.get("bitwise_same_across_threads") is False:
            ora += ", **T>1 not bitwise = T=1**"
        peer_ora = []
        for peer in PEERS[1:]:
            po = c["oracle_" + peer]
            if c["threads"] != 1 and po is not None:
                peer_ora.append("see T=1")
            elif po is None:
                peer_ora.append("n/a" if c.get(peer + "_na") else "—")
            elif "error" in po:
                peer_ora.append("**" + po["error"] + "**")
            else:
                peer_ora.append(("ok" if po["ok"] else "**DISAGREE**") + f" max abs {po['max_abs']:.1e}")
        peer_ora = peer_ora[0] if c["threads"] != 1 and peer_ora[0] == peer_ora[1] else " / ".join(peer_ora)
        ratio = cell(c, "ort", lambda v: f"{v:.3g}" if v else "—", c["ratio"])
        dratio = " / ".join(cell(c, peer, lambda v: f"{v:.3g}" if v else "—", c["ratio_" + peer])
                            for peer in PEERS[1:])
        roof = (f"{fmt_ms(c['roofline_ms'])} ({c['roofline_bound']})" if c["roofline_ms"] else "—")
        cprobe = (f"{fmt_ms(c['case_probe_ms'])} ({fmt_pct(c['onnxrun_pct_case_probe'])})"
                  if c["case_probe_ms"] else "—")
        op = c["op"] + (" float64" if c["dtype"] == "float64" else "")
        lines.append("| " + " | ".join([c["case"], op, str(c["threads"]), ms["onnxrun"], ms["ort"],
                                        f"{ms['dnnl_blocked']} / {ms['dnnl_nchw']}", ratio, dratio, roof,
                                        four(c, fmt_pct, "_pct_roofline"), cprobe, rate, pct, probe,
                                        rss, other, spread, ora, peer_ora]) + " |")
        for tool in TOOLS:
            r = c[tool]
            if r and r["runs"] < r.get("runs_requested", r["runs"]):
                notes.append(f"{c['case']} T={c['threads']} {LABEL[tool]}: {r['runs']} timed runs instead of "
                             f"{r['runs_requested']} (time budget)")
            if c["threads"] == cases[0]["threads"] and c.get(tool + "_na"):
                notes.append(f"{c['case']}: {LABEL[tool]} n/a ({c[tool + '_na']})")
        for fl in c["failures"]:
            notes.append(f"{c['case']} T={c['threads']} {fl['tool']}: FAILED ({fl.get('error', '')})")
    geo_lines = []
    for threads, g in geo.items():
        gm = g["geomean_ratio"]
        geo_lines.append(f"| geomean ratio ORT/onnxrun, threads={threads} | "
                         f"{gm:.4g} | over {g['cases']} of {g['cases_total']} float32 cases |" if gm else
                         f"| geomean ratio ORT/onnxrun, threads={threads} | — | no case |")
        for peer in PEERS[1:]:
            gp = g["geomean_ratio_" + peer]
            geo_lines.append(f"| geomean ratio {LABEL[peer]}/onnxrun, threads={threads} | "
                             + (f"{gp:.4g} | over {g['cases_' + peer]} cases (ConvTranspose float32) |" if gp
                                else "— | no case |"))
    scal_table, scal_rows = scaling_table(scaling)
    table = "\n".join(lines)
    geo_table = "| summary | value | |\n|---|---|---|\n" + "\n".join(geo_lines)

    result = {
        "schema": 2,
        "date": run_meta.get("date"),
        "machine": run_meta.get("machine"),
        "git_commit": run_meta.get("git_commit"),
        "git_dirty": run_meta.get("git_dirty"),
        "config": run_meta.get("config"),
        "load": run_meta.get("load"),
        "contention": contention,
        "versions": run_meta.get("versions"),
        "peak": peak,
        "baselines": baselines,
        "floors": floors,
        "conventions": {
            "time": "median of the timed runs after warm-up, wall clock around one session run",
            "ratio": "ORT median / onnxrun median (>1: onnxrun faster); ratio_dnnl_*: oneDNN median / onnxrun median",
            "ConvTranspose FLOPs": "2 * N * C_in * (M/group) * prod(kernel) * prod(input spatial)",
            "DepthToSpace bytes": "2 * tensor bytes (read + write)",
            "peak for T threads": "measured FP32 (FP64 for float64 cases) FMA GFLOP/s (max of AVX-512, AVX2) "
                                  "or memcpy GB/s (2 * bytes per copy) with the same thread count",
            "roofline": "max(FLOPs / FMA peak, tensor bytes (X, W, B, Y) / copy bandwidth of the smallest "
                        "measured level (L2, L3, DRAM) whose copy footprint holds them), same thread count; "
                        "% of roofline = roofline time / measured median",
            "case probe": "bench/case_probe.c in the same rounds: the case's FLOPs as vector FMAs at the FMA "
                          "probe's rate interleaved with reading X, W, B once and writing Y once; onnxrun at = "
                          "probe median / onnxrun median",
            "oracle": f"max |onnxrun - ORT| / max |ORT| on the T=1 bench input; disagreement above {ORACLE_TOL}",
            "oneDNN oracle": f"max |oneDNN - onnxrun| (and / max |onnxrun|) on the T=1 bench input; "
                             f"disagreement above {ORACLE_TOL} relative",
        },
        "cases": cases,
        "geomean": geo,
        "scaling": scal_rows,
        "notes": notes,
    }
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "latest.json"), "w") as f:
        json.dump(result, f, indent=1)

    m = run_meta.get("machine") or {}
    cfg = run_meta.get("config") or {}
    load = run_meta.get("load") or {}
    ver = run_meta.get("versions") or {}
    fma512 = peak.get("fma_avx512_gflops")
    md = [
        "# onnxrun vs ONNX Runtime — benchmark results",
        "",
        f"- date: {run_meta.get('date')}",
        f"- machine: {m.get('model_name')}, {m.get('cores')} cores ({m.get('kernel', '')})",
        f"- onnxrun commit: {run_meta.get('git_commit')}" + (" (work tree had other changes)" if run_meta.get("git_dirty") else ""),
        f"- ONNX Runtime: onnxruntime-node {ver.get('onnxruntime_node')} (CPU provider), node {ver.get('node')}; compiler: {ver.get('cc')}",
        f"- oneDNN: Debian libdnnl-dev {ver.get('libdnnl_dev', '—')} (CPU runtime: {ver.get('dnnl_cpu_runtime') or '—'}), "
        "deconvolution primitive, direct, f32, forward_inference; \"blocked\": its preferred layouts, no reorder timed; "
        "\"NCHW\": plain source and destination",
        f"- protocol: {cfg.get('warmup')} warm-up runs"
        + (f" or more, for at least {cfg['warmup_ms']} ms" if cfg.get("warmup_ms") else "")
        + f", {cfg.get('runs')} timed runs (median) per process"
        + (f", more where needed to span {cfg['min_time_ms']} ms" if cfg.get("min_time_ms") else "") + "; "
        f"{cfg.get('rounds', 1)} round(s) per case and thread count, alternating onnxrun, ORT, oneDNN blocked and oneDNN NCHW, each a fresh process"
        + (", each round a pass over the whole suite (a case's rounds minutes apart)" if cfg.get("rounds_as_passes") else "") + "; "
        "the table gives each tool's median round and the range of its round medians; "
        f"time budget {cfg.get('budget_s')} s per timed phase; "
        f"wait for idle: {str(cfg.get('wait_idle_s')) + ' s max' if cfg.get('wait_idle_s') else 'off'}; "
        f"filter: {cfg.get('filter') or '(none: full suite)'}; the cases took {cfg.get('elapsed_s')} s",
        f"- load average (1 min) before the first / after the last measurement: {load.get('start')} / {load.get('end')}",
        "- other load: CPUs kept busy by other processes while a measurement ran (machine busy time minus the "
        "tool's own CPU time, over wall time; 2 = both vCPUs): "
        + (f"mean {contention['other_cpus_mean']:.2f}, max {contention['other_cpus_max']:.2f}; "
           f"hypervisor steal mean {contention['steal_cpus_mean']:.2f} CPUs"
           if contention["other_cpus_mean"] is not None else "not recorded")
        + ("  — **the machine was busy during this run: timings are noisy**" if contention["busy"] else ""),
        "",
        "## Measured machine limits (bench/peak.c)",
        "",
        "| limit | 1 thread | " + f"{pt[-1]} threads |",
        "|---|---|---|",
        f"| FP32 FMA AVX-512 GFLOP/s | {fma512[0] if fma512 else '—'} | {fma512[-1] if fma512 else '—'} |",
        f"| FP32 FMA AVX2 GFLOP/s | {peak['fma_avx2_gflops'][0]} | {peak['fma_avx2_gflops'][-1]} |",
        f"| memcpy GB/s (256 MiB, read+write = 2x bytes, best) | {bw[0]} | {bw[-1]} |",
        f"| memcpy GB/s (median copy) | {peak['memcpy_gbs_median'][0]} | {peak['memcpy_gbs_median'][-1]} |",
    ] + ([
        f"| FP64 FMA AVX-512 GFLOP/s | {(peak.get('fma64_avx512_gflops') or ['—'])[0]} | {(peak.get('fma64_avx512_gflops') or ['—'])[-1]} |",
        f"| FP64 FMA AVX2 GFLOP/s | {peak['fma64_avx2_gflops'][0]} | {peak['fma64_avx2_gflops'][-1]} |",
    ] if peak.get("fma64_avx2_gflops") else []) + ([
        f"| L2 copy GB/s ({peak['copy_l2_bytes_per_thread'] >> 10} KiB per thread, best) | {peak['copy_l2_gbs'][0]} | {peak['copy_l2_gbs'][-1]} |",
        f"| L3 copy GB/s ({peak['copy_l3_bytes'] >> 20} MiB shared, best) | {peak['copy_l3_gbs'][0]} | {peak['copy_l3_gbs'][-1]} |",
        "",
        "The roofline takes a case's tensors as cache-resident when they fit in the cache sizes the "
        f"system reports: L2 {fmt_size(peak.get('cache_l2_bytes'))} per core, L3 {fmt_size(peak.get('cache_l3_bytes'))} "
        "(a VM may report sizes that are not the host's; larger sizes only lower the bound).",
    ] if peak.get("copy_l2_gbs") else []) + [
        "",
        "".join(f"At {t} threads peak.c's FP32 AVX-512 FMA figure was {was} GFLOP/s, below the "
                f"{best} that the FMA probes before this run's measurements reached at {t} threads "
                "(the host held or slowed a vCPU while peak.c ran): the table above and the rooflines use "
                f"{best}, the FP64 figures at {t} threads scaled by the same factor. "
                for t, (was, best) in sorted(fma_raised.items())),
        (f"Other load while peak.c ran: {peak['other_cpus']:.2f} CPUs"
         + (" — **contended: these limits are underestimates, so \"% of peak\" reads high**"
            if peak["other_cpus"] > 0.25 else "") + "."
         if "other_cpus" in peak else "Other load while peak.c ran: not recorded."),
        "",
        "## Results",
        "",
        "ratio = ORT median / onnxrun median: above 1 means onnxrun is faster; ratio oneDNN/onnxrun likewise "
        "(oneDNN median / onnxrun median). Roofline: the time the case cannot beat on this machine, the larger "
        "of FLOPs / FMA peak (FP64 peak for float64 cases) and the bytes of X, W, B and Y / the copy bandwidth "
        "of the smallest measured level (L2, L3, DRAM) whose copy footprint holds them, both measured in this "
        "run at the same thread count; % of roofline = roofline time / median time. Float64 cases: no peer "
        "has a float64 ConvTranspose (n/a), only onnxrun's share of the roofline. Case probe (ConvTranspose): "
        "bench/case_probe.c timed in the same rounds doing only the case's unavoidable work, its FLOPs as "
        "vector FMAs in the FMA probe's loop interleaved with reading X, W and B once and writing Y once; "
        "\"onnxrun at\" = its median / onnxrun's: near 100% the case runs at what this machine does for its "
        "work. Rates use the median time. "
        "% of peak: ConvTranspose against the FMA peak, DepthToSpace against memcpy bandwidth, "
        "both measured with the same thread count. % of FMA probe (ConvTranspose): the same rate against "
        "the FMA rate `peak --probe T` measured (~0.15 s) right before that tool's measurement of the "
        "reported round, which follows the host's current speed. Peak RSS includes each tool's floor "
        f"(onnxrun_bench alone: {baselines.get('onnxrun', {}).get('peak_rss_kb', 0) / 1024:.0f} MB; "
        f"node + onnxruntime-node loaded: {baselines.get('ort', {}).get('peak_rss_kb', 0) / 1024:.0f} MB; "
        f"dnnl_bench with oneDNN's CPU engine: {baselines.get('dnnl', {}).get('peak_rss_kb', 0) / 1024:.0f} MB). "
        "oneDNN vs onnxrun: oneDNN's output (each layout, back in NCHW after the timing) against onnxrun's, "
        f"same input and weights, max |difference|; DISAGREE above {ORACLE_TOL} of max |onnxrun|.",
        "",
        "Per-run floor (a one-element DepthToSpace, median of 200 runs): "
        + ", ".join(f"{fl['floor']} T={fl['threads']} {fl['median_ms'] * 1000:.1f} µs" for fl in floors)
        + ". Each reported time includes its tool's floor (for ORT: the async Node binding and the output "
        "tensor handed to JavaScript).",
        "",
        table,
        "",
        geo_table,
        "",
    ] + ([
        "## Thread scaling, interleaved (onnxrun_bench --scaling)",
        "",
        SCALING_TEXT,
        "",
        scal_table,
        "",
    ] if scal_rows else [])
    impl_lines = []
    for c in cases:
        if c["threads"] != cases[0]["threads"] or not any(c[p] for p in PEERS[1:]):
            continue
        impl_lines.append(f"| {c['case']} | " + " | ".join(
            (f"{c[p].get('impl', '?')} ({c[p].get('src_fmt', '?')}, {c[p].get('wei_fmt', '?')}, {c[p].get('dst_fmt', '?')})"
             if c[p] else ("n/a" if c.get(p + "_na") else "—")) for p in PEERS[1:]) + " |")
    if impl_lines:
        md += ["## oneDNN implementations", "",
               "What oneDNN chose for each case: implementation (source, weights, destination layouts, oneDNN's "
               "notation: dimensions outermost first, upper case = split into blocks, then the inner blocks; "
               "e.g. aBcd16b = N, C/16, H, W, 16 channels).", "",
               "| case | blocked | NCHW |", "|---|---|---|"] + impl_lines + [""]
    if notes:
        md += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    with open(os.path.join(a.out, "latest.md"), "w") as f:
        f.write("\n".join(md))
    print(table)
    print()
    print(geo_table)
    if scal_rows:
        print()
        print(scal_table)
    for n in notes:
        print("note:", n)
    bad = [c["case"] for c in cases if c["oracle"] and (c["oracle"].get("ok") is False or "error" in c["oracle"])]
    bad += [f"{c['case']} ({LABEL[p]})" for c in cases for p in PEERS[1:]
            if c["oracle_" + p] and c["oracle_" + p].get("ok") is not True]
    if bad:
        print("ORACLE DISAGREEMENT:", ", ".join(bad))
    return 0


def cmd_readme(a):
    """The README's compact table from a latest.json (bench/results/latest.json). Columns a
    results file from before oneDNN and the roofline (schema 1) lacks print as "—"."""
    with open(a.json) as f:
        d = json.load(f)

    def ms(c, tool):
        r = c.get(tool)
        return fmt_ms(r["median_ms"]) if r else ("n/a" if c.get(tool + "_na") else "—")

    def pct(c, tool, key):
        r = c.get(tool)
        return fmt_pct(c.get(tool + key)) if r else ("n/a" if c.get(tool + "_na") else "—")

    def rss(c, tool):
        r = c.get(tool)
        return f"{r['peak_rss_kb'] / 1024:.0f}" if r else ("n/a" if c.get(tool + "_na") else "—")

    print("| case | threads | onnxrun ms | ORT ms | oneDNN ms (blocked / NCHW) | ORT/onnxrun "
          "| % of roofline (onnxrun / ORT / oneDNN blocked / NCHW) | % of measured peak (onnxrun / ORT) "
          "| % of FMA probe (onnxrun / ORT) | round medians ms (onnxrun / ORT) | peak RSS MB (onnxrun / ORT) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in d["cases"]:
        o, t = c["onnxrun"], c.get("ort")
        name = c["case"] + (" (float64)" if c.get("dtype") == "float64" else "")
        ratio = f"{c['ratio']:.3g}" if c.get("ratio") else ("n/a" if c.get("ort_na") else "—")
        roof = " / ".join(pct(c, tool, "_pct_roofline") for tool in TOOLS)
        print(f"| {name} | {c['threads']} | {ms(c, 'onnxrun')} | {ms(c, 'ort')} | "
              f"{ms(c, 'dnnl_blocked')} / {ms(c, 'dnnl_nchw')} | {ratio} | {roof} | "
              f"{pct(c, 'onnxrun', '_pct_peak')} / {pct(c, 'ort', '_pct_peak')} | "
              f"{pct(c, 'onnxrun', '_pct_probe')} / {pct(c, 'ort', '_pct_probe')} | "
              f"{fmt_rounds(o)} / {fmt_rounds(t) if t else ('n/a' if c.get('ort_na') else '—')} | "
              f"{rss(c, 'onnxrun')} / {rss(c, 'ort')} |")
    if d.get("scaling"):
        print()
        print(scaling_table([dict(r, scaling=True) for r in d["scaling"]])[0])
    return 0


def cmd_probe_args(a):
    """bench/case_probe.c's arguments for a ConvTranspose case (nothing for DepthToSpace): its
    FLOPs, the bytes it must read (X, W, B once) and write (Y once), --f64 for float64."""
    with open(a.meta) as f:
        m = json.load(f)
    if m.get("op") != "ConvTranspose":
        return 0
    size = 8 if m.get("dtype") == "float64" else 4
    group = m.get("attrs", {}).get("group", 1)
    bias = m["w"][1] * group if m.get("bias") else 0
    read = (math.prod(m["x"]) + math.prod(m["w"]) + bias) * size
    print(f"--flops {m['flops']} --read {read} --write {math.prod(m['y']) * size}"
          + (" --f64" if size == 8 else ""))
    return 0


def main(argv):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--case", required=True)
    c.add_argument("--ref")
    c.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    c.add_argument("--peer")
    c.add_argument("--numpy-ref", metavar="CASE_DIR")
    c.add_argument("--got", required=True)
    c.add_argument("--also", action="append")
    t = sub.add_parser("table")
    t.add_argument("--raw", required=True)
    t.add_argument("--models", required=True)
    t.add_argument("--peak", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--meta")
    r = sub.add_parser("readme")
    r.add_argument("--json", default="bench/results/latest.json")
    p = sub.add_parser("probe-args")
    p.add_argument("meta")
    a = ap.parse_args(argv)
    if a.cmd == "probe-args":
        return cmd_probe_args(a)
    if a.cmd == "compare":
        cmd_compare(a)
        return 0
    if a.cmd == "readme":
        return cmd_readme(a)
    return cmd_table(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
