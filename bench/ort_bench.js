#!/usr/bin/env node
// ort_bench.js - the ONNX Runtime (CPU provider) peer timer, same protocol as onnxrun_bench.
//
//   node bench/ort_bench.js MODEL [--case NAME] [--threads T] [--runs R] [--warmup W]
//                           [--input X.bin] [--output Y.bin] [--budget-s SEC] [--min-time-ms MS]
//                           [--warmup-ms WMS]
//   node bench/ort_bench.js --baseline
//
// Session options: intraOpNumThreads = T, interOpNumThreads = 1, graphOptimizationLevel
// 'all', executionMode 'sequential', executionProviders ['cpu']. Input X: raw little-endian
// float32 from --input (bench/make_models.py writes the same file onnxrun_bench reads), or
// zeros-free fixed-seed values if absent. W warm-up runs (default 3), then R timed runs
// (default 20), each timed with process.hrtime.bigint() around `await session.run(feeds)`.
// Prints one JSON line in the same format as onnxrun_bench; peak_rss_kb is
// process.resourceUsage().maxRSS (kilobytes) at the end, so run one process per case.
// --output writes output 0 of the last timed run as raw float32 (the oracle for onnxrun).
// A float64 case (meta.json beside the model says "dtype": "float64"; bench/make_models.py's
// "_f64" variants) feeds and writes float64. ORT 1.30's CPU provider has no float64
// ConvTranspose, so for those the session creation fails and bench/run.sh reports "n/a".
// --budget-s: as in onnxrun_bench (fewer runs, at least 3, when R runs would exceed SEC).
// --min-time-ms: as in onnxrun_bench (more runs, at most 100000, so they span MS by the last
// warm-up run's time; the budget still caps them). --warmup-ms: as in onnxrun_bench (warm-up
// goes on past W runs until it has taken WMS; "warmup" says how many runs it took).
// --baseline: peak RSS of node with onnxruntime-node loaded and no session (the floor).
'use strict';

const fs = require('fs');
const path = require('path');

function die(msg) {
  process.stderr.write(`ort_bench: error: ${msg}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = { threads: 1, runs: 20, warmup: 3, warmupMs: 0, budgetS: 0, minMs: 0, baseline: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--baseline') { o.baseline = true; continue; }
    if (!a.startsWith('--')) {
      if (o.model) die(`unexpected argument ${a}`);
      o.model = a;
      continue;
    }
    const v = argv[++i];
    if (v === undefined) die(`missing value for ${a}`);
    const int = (lo) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < lo) die(`bad value for ${a}: ${v}`);
      return n;
    };
    switch (a) {
      case '--case': o.caseName = v; break;
      case '--threads': o.threads = int(1); break;
      case '--runs': o.runs = int(1); break;
      case '--warmup': o.warmup = int(0); break;
      case '--budget-s': o.budgetS = int(0); break;
      case '--min-time-ms': o.minMs = int(0); break;
      case '--warmup-ms': o.warmupMs = int(0); break;
      case '--input': o.input = v; break;
      case '--output': o.output = v; break;
      default: die(`unknown option ${a}`);
    }
  }
  return o;
}

function loadOrt() {
  // Resolve from bench/node_modules whatever the caller's working directory is.
  const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
  return ort;
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  if (o.baseline) {
    console.log(JSON.stringify({ baseline: 'ort', peak_rss_kb: process.resourceUsage().maxRSS,
                                 ort_version: ort.env.versions ? ort.env.versions.common : null }));
    return;
  }
  if (!o.model) die('usage: ort_bench.js MODEL [--case NAME] [--threads T] [--runs R] ...');
  const t0 = nowMs();
  const session = await ort.InferenceSession.create(o.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: o.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    logSeverityLevel: 3,
  });
  const loadMs = nowMs() - t0;
  if (session.inputNames.length !== 1) die('the model must have exactly one input');
  const inName = session.inputNames[0];
  // Shape from the model's declared input (onnxruntime-node >= 1.20 exposes inputMetadata);
  // fall back to the sidecar meta.json that make_models.py writes.
  let dims = null;
  const md = session.inputMetadata;
  if (md && md[0] && Array.isArray(md[0].shape) && md[0].shape.every(Number.isInteger)) {
    dims = md[0].shape;
  } else {
    const meta = path.join(path.dirname(o.model), 'meta.json');
    if (!fs.existsSync(meta)) die('cannot find the input shape (no inputMetadata, no meta.json)');
    dims = JSON.parse(fs.readFileSync(meta, 'utf8')).x;
  }
  const numel = dims.reduce((a, b) => a * b, 1);
  const metaPath = path.join(path.dirname(o.model), 'meta.json');
  const dtype = fs.existsSync(metaPath) ? (JSON.parse(fs.readFileSync(metaPath, 'utf8')).dtype || 'float32') : 'float32';
  if (dtype !== 'float32' && dtype !== 'float64') die(`unsupported input dtype ${dtype}`);
  const Arr = dtype === 'float64' ? Float64Array : Float32Array;
  let x;
  if (o.input) {
    const buf = fs.readFileSync(o.input);
    if (buf.length !== numel * Arr.BYTES_PER_ELEMENT) {
      die(`${o.input}: ${buf.length} bytes, expected ${numel * Arr.BYTES_PER_ELEMENT}`);
    }
    x = new Arr(numel);
    new Uint8Array(x.buffer).set(buf);
  } else {
    x = new Arr(numel);
    let s = 0x0DDBA11CAFEn;
    const m64 = (1n << 64n) - 1n;
    for (let i = 0; i < numel; i++) {
      s ^= (s << 13n) & m64; s ^= s >> 7n; s ^= (s << 17n) & m64;
      x[i] = Number(s >> 11n) * (2 / 9007199254740992) - 1;
    }
  }
  const feeds = { [inName]: new ort.Tensor(dtype, x, dims) };
  const outName = session.outputNames[0];

  let lastMs = 0;
  let warmupDone = 0;
  const w0 = nowMs();
  while (warmupDone < 100000 && (warmupDone < o.warmup || nowMs() - w0 < o.warmupMs)) {
    const a = nowMs();
    await session.run(feeds);
    lastMs = nowMs() - a;
    warmupDone++;
  }
  const runsRequested = o.runs;
  let runs = o.runs;
  if (o.budgetS > 0 || o.minMs > 0) {
    if (warmupDone === 0) {
      const a = nowMs();
      await session.run(feeds);
      lastMs = nowMs() - a;
    }
    const est = Math.max(lastMs, 1e-3);
    if (o.minMs > 0 && o.minMs / est > runs) runs = Math.min(100000, Math.ceil(o.minMs / est));
    if (o.budgetS > 0) {
      const fit = Math.floor((o.budgetS * 1e3) / est);
      if (fit < runs) runs = Math.max(3, fit);
    }
  }
  const t = [];
  let last = null;
  for (let i = 0; i < runs; i++) {
    const a = nowMs();
    const r = await session.run(feeds);
    t.push(nowMs() - a);
    last = r;
  }
  if (o.output) {
    const y = last[outName];
    if (y.type !== dtype) die(`output ${outName} is ${y.type}, not ${dtype}`);
    const d = y.data;
    fs.writeFileSync(o.output, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
  }
  const sum = t.reduce((a, b) => a + b, 0);
  t.sort((a, b) => a - b);
  const median = runs % 2 ? t[(runs - 1) / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
  const cpu = process.cpuUsage();
  const r4 = (v) => Math.round(v * 1e6) / 1e6;
  console.log(JSON.stringify({
    case: o.caseName || o.model,
    threads: o.threads,
    median_ms: r4(median),
    min_ms: r4(t[0]),
    runs,
    peak_rss_kb: process.resourceUsage().maxRSS,
    warmup: warmupDone,
    mean_ms: r4(sum / runs),
    max_ms: r4(t[runs - 1]),
    load_ms: Math.round(loadMs * 1e3) / 1e3,
    runs_requested: runsRequested,
    cpu_s: Math.round((cpu.user + cpu.system) / 1e3) / 1e3,
  }));
  if (session.release) await session.release();
}

main().catch((e) => die(e && e.stack ? e.stack : String(e)));
