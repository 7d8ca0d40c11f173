#!/usr/bin/env node
// wasm_bench.mjs - onnxrun's WebAssembly build against onnxruntime-web (its wasm backend) in
// one node process: the suite's ConvTranspose cases, 1 thread, the same model and input
// files for both (bench/make_models.py), rounds alternating the two runtimes.
//
//   node bench/wasm_bench.mjs [--filter F] [--rounds R] [--min-ms MS] [--warmup-ms WMS]
//                             [--models DIR] [--module DIR] [--json FILE]
//
// Per case and round: each runtime warms up for WMS ms (default 300; at least 2 runs), then
// times runs (process.hrtime.bigint around one run, output copied to JS included for both)
// until MS ms (default 500; at least 5 runs) have passed, and keeps their median. R rounds
// (default 3) alternate which runtime goes first; the table gives the median of the round
// medians. onnxrun: the package (js/node.mjs) over build-wasm/js (onnxrun-simd: SIMD128,
// single-threaded).
// onnxruntime-web: numThreads 1, the wasm execution provider, graph optimisation 'all'.
// The outputs of both are compared (max |a - b| / max |b|) so a wrong result cannot pass as
// a fast one. Timings on a shared machine are indicative.
import { readFileSync, writeFileSync, readdirSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const opt = { filter: '', rounds: 3, minMs: 500, warmupMs: 300, models: path.join(here, 'build', 'models'),
	module: path.join(root, 'build-wasm', 'js'), json: '' };
for (let i = 2; i < process.argv.length; i += 2) {
	const a = process.argv[i], v = process.argv[i + 1];
	if (v === undefined) throw new Error(`missing value for ${a}`);
	const num = () => { const n = Number(v); if (!(n >= 1)) throw new Error(`bad ${a} ${v}`); return n; };
	switch (a) {
	case '--filter': opt.filter = v; break;
	case '--rounds': opt.rounds = num(); break;
	case '--min-ms': opt.minMs = num(); break;
	case '--warmup-ms': opt.warmupMs = num(); break;
	case '--models': opt.models = v; break;
	case '--module': opt.module = v; break;
	case '--json': opt.json = v; break;
	default: throw new Error(`unknown option ${a}`);
	}
}

const onnxrun = await import(path.join(root, 'js', 'node.mjs'));
onnxrun.env.wasm.wasmPaths = opt.module;
onnxrun.env.wasm.forceBuild = 'simd';
const ort = createRequire(import.meta.url)('onnxruntime-web');
ort.env.wasm.numThreads = 1;
ort.env.wasm.proxy = false;
ort.env.logLevel = 'error';

const median = (a) => { const s = [...a].sort((x, y) => x - y), n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const now = () => Number(process.hrtime.bigint()) / 1e6;

// Runs fn (sync or async) for warm-up, then timed; returns { median, runs, out }.
async function timeIt(fn) {
	let out, t0 = now(), n = 0;
	while (n < 2 || now() - t0 < opt.warmupMs) { out = await fn(); n++; }
	const times = [];
	t0 = now();
	while (times.length < 5 || now() - t0 < opt.minMs) {
		const a = now();
		out = await fn();
		times.push(now() - a);
	}
	return { median: median(times), runs: times.length, out };
}

const cases = readdirSync(opt.models).filter((c) => existsSync(path.join(opt.models, c, 'meta.json'))).sort()
	.map((c) => JSON.parse(readFileSync(path.join(opt.models, c, 'meta.json'), 'utf8')))
	.filter((m) => m.op === 'ConvTranspose' && m.case.includes(opt.filter));
if (!cases.length) throw new Error(`no ConvTranspose cases in ${opt.models} (run bench/make_models.py)`);

const results = [];
console.log('| case | onnxrun-wasm ms | onnxruntime-web ms | ORT / onnxrun | outputs max rel diff |');
console.log('|---|---|---|---|---|');
for (const meta of cases) {
	const dir = path.join(opt.models, meta.case);
	const bytes = readFileSync(path.join(dir, 'model.onnx'));
	const raw = readFileSync(path.join(dir, 'input.bin'));
	const x = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
	const s = await onnxrun.InferenceSession.create(bytes);
	const inName = s.inputNames[0], outName = s.outputNames[0];
	const o = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all',
		executionMode: 'sequential', intraOpNumThreads: 1, interOpNumThreads: 1 });
	const feeds = { [o.inputNames[0]]: new ort.Tensor('float32', x, meta.x) };
	const xa = new onnxrun.Tensor('float32', x, meta.x);
	const runA = async () => (await s.run({ [inName]: xa }))[outName].data;
	const runB = async () => {
		const r = await o.run(feeds);
		const t = r[o.outputNames[0]];
		const d = t.data; // copied out of the wasm heap by ORT
		t.dispose?.();
		return d;
	};
	const ta = [], tb = [];
	let a, b;
	for (let r = 0; r < opt.rounds; r++) {
		if (r % 2 === 0) { a = await timeIt(runA); b = await timeIt(runB); }
		else { b = await timeIt(runB); a = await timeIt(runA); }
		ta.push(a.median);
		tb.push(b.median);
	}
	let maxd = 0, maxb = 0;
	for (let i = 0; i < b.out.length; i++) {
		maxd = Math.max(maxd, Math.abs(a.out[i] - b.out[i]));
		maxb = Math.max(maxb, Math.abs(b.out[i]));
	}
	const rel = a.out.length === b.out.length ? maxd / (maxb || 1) : Infinity;
	const ma = median(ta), mb = median(tb);
	results.push({ case: meta.case, onnxrun_ms: ma, ort_web_ms: mb, onnxrun_rounds: ta, ort_web_rounds: tb,
		ratio: mb / ma, max_rel_diff: rel });
	console.log(`| ${meta.case} | ${ma.toFixed(3)} | ${mb.toFixed(3)} | ${(mb / ma).toFixed(2)} | ${rel.toExponential(1)} |`);
	await s.release();
	await o.release();
}
const slower = results.filter((r) => r.ratio <= 1).map((r) => r.case);
console.log(`\nonnxrun-wasm faster on ${results.length - slower.length} of ${results.length} cases` +
	(slower.length ? ` (not on: ${slower.join(', ')})` : ''));
if (opt.json)
	writeFileSync(opt.json, JSON.stringify({ node: process.version, ort_web: ort.env.versions?.web, rounds: opt.rounds,
		min_ms: opt.minMs, warmup_ms: opt.warmupMs, results }, null, 1) + '\n');
if (results.some((r) => !(r.max_rel_diff < 1e-3)))
	process.exitCode = 1;
