#!/usr/bin/env node
// browser_bench.mjs - onnxrun's npm package against onnxruntime-web (its wasm backend, SIMD) in
// headless Chromium, on the suite's ConvTranspose cases (bench/make_models.py), at 1 and 2
// threads, both runtimes in the same cross-origin isolated page (COOP/COEP from
// examples/web/serve.mjs, so both may use threads).
//
//   node bench/browser_bench.mjs [--threads 1,2] [--filter F] [--rounds R] [--min-ms MS]
//                                [--warmup-ms WMS] [--models DIR] [--json FILE] [--chromium PATH]
//                                [--keep-outputs 1]
//
// Per thread count a fresh page: onnxrun picks its build as a page would (1 thread: relaxed
// SIMD where Chromium has it; 2 threads: the pthreads build, with relaxed SIMD there too), onnxruntime-web 1.30.0 gets
// env.wasm.numThreads = T, graph optimisation 'all'. Per case and round each runtime warms up
// for WMS ms (default 300), then times runs (performance.now() around `await run`, output
// copied to JS included for both; each output disposed before the next run, untimed) until
// MS ms (default 500) and keeps the median (--keep-outputs 1: never disposed, so every run of
// both gets a new output buffer; then also the floor of such a run, a new output-sized buffer
// holding a copy, timed the same way, and the ratio of the times above it); R rounds
// (default 3) alternate which runtime goes first; the table gives the median of the round
// medians. Outputs are compared (max |a - b| / max |b|; above 1e-3 fails). Needs js/dist
// (js/tools/dist.sh), bench/build/models, and onnxruntime-web (`npm ci` in bench/) and
// puppeteer-core (`npm ci` in tests/web/).
import { readFileSync, writeFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../examples/web/serve.mjs';
import { launch } from '../tests/web/run.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const opt = { threads: [1, 2], filter: '', rounds: 3, minMs: 500, warmupMs: 300, models: path.join(here, 'build', 'models'),
	json: '', chromium: '/usr/bin/chromium', keep: false };
for (let i = 2; i < process.argv.length; i += 2) {
	const a = process.argv[i], v = process.argv[i + 1];
	if (v === undefined) throw new Error(`missing value for ${a}`);
	const num = () => { const n = Number(v); if (!(n >= 1)) throw new Error(`bad ${a} ${v}`); return n; };
	switch (a) {
	case '--threads': opt.threads = v.split(',').map(Number); break;
	case '--filter': opt.filter = v; break;
	case '--rounds': opt.rounds = num(); break;
	case '--min-ms': opt.minMs = num(); break;
	case '--warmup-ms': opt.warmupMs = num(); break;
	case '--models': opt.models = path.resolve(v); break;
	case '--json': opt.json = v; break;
	case '--chromium': opt.chromium = v; break;
	case '--keep-outputs': opt.keep = v === '1'; break;
	default: throw new Error(`unknown option ${a}`);
	}
}
if (!path.resolve(opt.models).startsWith(root + path.sep)) throw new Error('--models must be inside the repository (served from it)');

const cases = readdirSync(opt.models).filter((c) => existsSync(path.join(opt.models, c, 'meta.json'))).sort()
	.map((c) => JSON.parse(readFileSync(path.join(opt.models, c, 'meta.json'), 'utf8')))
	.filter((m) => m.op === 'ConvTranspose' && m.dtype !== 'float64' && m.case.includes(opt.filter));
if (!cases.length) throw new Error(`no ConvTranspose cases in ${opt.models} (run bench/make_models.py)`);
const ortDir = ['bench', 'build-web/npm'].map((d) => `${d}/node_modules/onnxruntime-web/dist/`).find((d) => existsSync(path.join(root, d)));
if (!ortDir) throw new Error('onnxruntime-web is not installed (npm ci in bench/)');
const ortVersion = JSON.parse(readFileSync(path.join(root, ortDir, '..', 'package.json'), 'utf8')).version;

// ORT's time above the new-output floor over onnxrun's; none when onnxrun's run is within 5%
// of the floor (what is left is below the floor's own run-to-run spread).
const aboveFloor = (r) => r.onnxrun_ms > r.floor_ms * 1.05
	? ((r.ort_web_ms - r.floor_ms) / (r.onnxrun_ms - r.floor_ms)).toFixed(2) : 'onnxrun within 5% of the floor';

const server = await startServer({ root, port: 0, isolated: true });
const browser = await launch(opt.chromium, path.join(root, 'build-web', 'chromium-bench-profile'));
const results = [];
const rel = (p) => '/' + path.relative(root, p).split(path.sep).join('/');
try {
	for (const threads of opt.threads) {
		const page = await browser.newPage();
		page.on('pageerror', (e) => console.log(`page error: ${e.message}`));
		await page.goto(server.url + 'bench/browser_bench.html');
		const env = await page.evaluate(async (cfg) => (await import('/bench/browser_bench_page.mjs')).setup(cfg),
			{ threads, ortUrl: `/${ortDir}ort.wasm.min.mjs`, ortWasm: `/${ortDir}` });
		console.log(`\n${await browser.version()}, ${threads} thread(s), onnxruntime-web ${ortVersion}, crossOriginIsolated ${env.crossOriginIsolated}`);
		const floorCols = opt.keep ? ' new-output floor ms | ORT / onnxrun above the floor |' : '';
		console.log(`| case | onnxrun ms | onnxruntime-web ms | ORT / onnxrun | onnxrun build | outputs max rel diff |${floorCols}`);
		console.log(`|---|---|---|---|---|---|${opt.keep ? '---|---|' : ''}`);
		for (const meta of cases) {
			const dir = path.join(opt.models, meta.case);
			const r = await page.evaluate(async (c) => (await import('/bench/browser_bench_page.mjs')).benchCase(c), {
				modelUrl: rel(path.join(dir, 'model.onnx')), inputUrl: rel(path.join(dir, 'input.bin')), dims: meta.x, threads,
				rounds: opt.rounds, minMs: opt.minMs, warmupMs: opt.warmupMs, keep: opt.keep });
			const row = { case: meta.case, threads, ...r, ratio: r.ort_web_ms / r.onnxrun_ms };
			results.push(row);
			console.log(`| ${meta.case} | ${r.onnxrun_ms.toFixed(2)} | ${r.ort_web_ms.toFixed(2)} | ${row.ratio.toFixed(2)} | ` +
				`${r.backend.build}/${r.backend.threads} | ${r.max_rel_diff.toExponential(1)} |` +
				(opt.keep ? ` ${r.floor_ms.toFixed(2)} | ${aboveFloor(r)} |` : ''));
		}
		await page.close();
		const mine = results.filter((r) => r.threads === threads);
		const geo = Math.exp(mine.reduce((s, r) => s + Math.log(r.ratio), 0) / mine.length);
		const slower = mine.filter((r) => r.ratio <= 1).map((r) => r.case);
		console.log(`\n${threads} thread(s): onnxrun faster on ${mine.length - slower.length} of ${mine.length} cases` +
			`${slower.length ? ` (not on: ${slower.join(', ')})` : ''}; geometric mean ORT / onnxrun ${geo.toFixed(2)}`);
	}
} finally {
	await browser.close();
	await server.close();
}
if (opt.json)
	writeFileSync(opt.json, JSON.stringify({ chromium: opt.chromium, ort_web: ortVersion, rounds: opt.rounds,
		min_ms: opt.minMs, warmup_ms: opt.warmupMs, keep_outputs: opt.keep, results }, null, 1) + '\n');
if (results.some((r) => !(r.max_rel_diff < 1e-3)))
	process.exitCode = 1;
