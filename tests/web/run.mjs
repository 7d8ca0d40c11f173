#!/usr/bin/env node
// run.mjs - the browser tests of the npm package (js/), in Debian's headless Chromium driven by
// puppeteer-core, pages served by examples/web/serve.mjs on 127.0.0.1 (docs/web.md):
//   conformance-*   tests/data and models/ through the package, one page per build: simd,
//                   relaxed (relaxed SIMD), threads and relaxed-threads (cross-origin isolated,
//                   2 threads) and proxy (sessions in a Web Worker); every output within the
//                   CLI's tolerances
//   bad-input       truncated/empty/garbage model, wrong dtype/dims/rank/name, detached
//                   buffers, run after release: each an Error with a clear message, none hangs
//   threads         outputs at 1 and 2 threads bitwise equal (each pthreads build)
//   relaxed         relaxed SIMD builds' outputs within the op tests' tolerance of SIMD128's
//   worker          main-thread requestAnimationFrame gaps during a ~1 s run, proxy on/off
//   ort-compat      the same code for onnxruntime-web run with only the import changed
//   pack            `npm pack` tarball installed offline into an empty folder, run in node and
//                   in a page served from that folder
//   demo            examples/web/ upscales its bundled image; pixels against the CLI's output;
//                   screenshot saved
//   types           tsc --noEmit over tests/web/types_check.ts against js/onnxrun.d.ts
//
//   node tests/web/run.mjs [--only NAME[,NAME]] [--artifacts DIR] [--chromium PATH]
//
// Needs js/dist (js/tools/dist.sh), build-wasm/onnxrun.js (the CLI, for demo) and the npm
// packages of tests/web/package.json installed in build-web/npm (.ci/web_deps.sh). Exit status
// 1 when any check fails.
import { readdirSync, existsSync, readFileSync, writeFileSync, mkdirSync, rmSync, copyFileSync, cpSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { startServer } from '../../examples/web/serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
// The test tools from npm live in a build folder (.ci/web_deps.sh), not under tests/.
const npmTools = path.join(root, 'build-web', 'npm');
if (!existsSync(path.join(npmTools, 'node_modules'))) throw new Error(`${npmTools}/node_modules is missing: run bash .ci/web_deps.sh`);
const require = createRequire(path.join(npmTools, 'package.json'));
const puppeteer = require('puppeteer-core');

const opt = { only: null, artifacts: path.join(root, 'build-web', 'artifacts'), chromium: '/usr/bin/chromium' };
const isMain = process.argv[1] === fileURLToPath(import.meta.url);
for (let i = 2; isMain && i < process.argv.length; i++) {
	const a = process.argv[i], v = process.argv[++i];
	if (a === '--only') opt.only = new Set(v.split(','));
	else if (a === '--artifacts') opt.artifacts = path.resolve(v);
	else if (a === '--chromium') opt.chromium = v;
	else throw new Error(`unknown option ${a}`);
}

let failures = 0, passes = 0;
function check(ok, what, detail = '') {
	if (ok) passes++;
	else failures++;
	console.log(`${ok ? 'PASS' : 'FAIL'} ${what}${detail ? `: ${detail}` : ''}`);
}

// Chromium as root on a closed network: no sandbox, no GPU, no background connections, a
// fresh profile per run.
export async function launch(chromium = opt.chromium, profile = path.join(root, 'build-web', 'chromium-profile')) {
	rmSync(profile, { recursive: true, force: true });
	return puppeteer.launch({
		executablePath: chromium, headless: true, userDataDir: profile, protocolTimeout: 600000,
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
			'--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
	});
}

// The conformance cases: every folder with model.onnx and test_data_set_*/ under tests/data
// and models/, except external_data (its weights live in a file beside the model, which a
// model given as bytes or one URL cannot name).
function conformanceCases() {
	const cases = [];
	for (const top of ['tests/data', 'models']) {
		for (const name of readdirSync(path.join(root, top)).sort()) {
			const dir = path.join(root, top, name);
			if (!existsSync(path.join(dir, 'model.onnx')) || name === 'external_data') continue;
			const sets = readdirSync(dir).filter((d) => d.startsWith('test_data_set_')).sort().map((d) => {
				const files = readdirSync(path.join(dir, d)).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
				const url = (f) => `/${top}/${name}/${d}/${f}`;
				return { inputs: files.filter((f) => /^input_\d+\.pb$/.test(f)).map(url),
					outputs: files.filter((f) => /^output_\d+\.pb$/.test(f)).map(url) };
			});
			cases.push({ name: `${top}/${name}`, model: `/${top}/${name}/model.onnx`, sets });
		}
	}
	return cases;
}

const want = (name) => !opt.only || opt.only.has(name) || [...opt.only].some((o) => name.startsWith(o));

async function newPage(browser, base, page = 'tests/web/blank.html') {
	const p = await browser.newPage();
	p.on('pageerror', (e) => console.log(`  page error: ${e.message}`));
	p.on('console', (m) => { if (m.type() === 'error' && !/status of 404/.test(m.text())) console.log(`  console: ${m.text()}`); });
	p.on('response', (r) => { if (r.status() === 404) console.log(`  (404 ${r.url()})`); });
	await p.goto(base + page);
	return p;
}

const inPage = (p, fn, ...args) => p.evaluate(async (fn, args) => {
	const m = await import('/tests/web/page_tests.mjs');
	return m[fn](...args);
}, fn, args);

async function conformance(browser, isolated, plain) {
	const cases = conformanceCases();
	const configs = [
		{ name: 'conformance-simd', base: plain, cfg: { build: 'simd', numThreads: 1 } },
		{ name: 'conformance-relaxed', base: plain, cfg: { numThreads: 1 }, expect: 'relaxed' },
		{ name: 'conformance-threads', base: isolated, cfg: { build: 'threads', numThreads: 2 } },
		{ name: 'conformance-relaxed-threads', base: isolated, cfg: { numThreads: 2 }, expect: 'relaxed-threads' },
		{ name: 'conformance-proxy', base: isolated, cfg: { numThreads: 2, proxy: true }, expect: 'relaxed-threads' },
	];
	for (const c of configs) {
		if (!want(c.name)) continue;
		const p = await newPage(browser, c.base);
		await inPage(p, 'configure', c.cfg);
		const { results, backend } = await inPage(p, 'conformance', cases);
		const bad = results.filter((r) => !r.ok);
		check(bad.length === 0 && results.length > 0, `${c.name}: ${results.length - bad.length}/${results.length} outputs of ${cases.length} models`,
			bad.map((b) => `${b.name}: ${b.why}`).join('; '));
		check(backend && backend.build === (c.expect ?? c.cfg.build) && (!c.cfg.proxy || backend.proxy),
			`${c.name}: runs on build ${JSON.stringify(backend)}`);
		await p.close();
	}
}

async function badInput(browser, base) {
	const p = await newPage(browser, base);
	await inPage(p, 'configure', { build: 'simd', numThreads: 1 });
	const r = await inPage(p, 'badInput');
	const expect = {
		truncatedModel: /invalid model|truncated|parse|model/i, emptyModel: /empty|detached/, garbageModel: /model/i,
		missingUrl: /HTTP 404/, wrongDtype: /input 'image': expected dtype float, got double/,
		wrongDims: /input 'image': dim 2 is 16 but the model declares/, wrongRank: /input 'image': expected rank 4/,
		wrongName: /no input named 'picture'/, missingInput: /input 'image' is missing/, notATensor: /input 'image': no data/,
		lengthMismatch: /hold 3072 elements, the data 7/, detachedBuffer: /detached/, detachedModel: /empty or detached/,
		tensorBadType: /unsupported type 'float128'/, tensorBadDims: /dims must be/, runAfterRelease: /released/,
	};
	for (const [k, re] of Object.entries(expect)) {
		const v = r[k];
		check(v.settled && !v.ok && v.isError && re.test(v.message), `bad-input ${k}`,
			v.settled ? `${v.ok ? 'resolved' : `${v.name}: ${v.message}`}` : 'promise never settled');
	}
	check(r.goodRunAfterErrors.ok, 'bad-input: the module still runs after every error');
	check(r.releaseTwice.settled && r.releaseTwice.ok, 'bad-input: release twice is a no-op');
	await p.close();
}

// Each pthreads build (SIMD128, and relaxed SIMD, which Chromium picks): 1 and 2 threads give
// the same bits.
async function threads(browser, base) {
	for (const build of ['threads', 'relaxed-threads']) {
		const p = await newPage(browser, base);
		const cfg = await inPage(p, 'configure', { build, numThreads: 2 });
		check(cfg.crossOriginIsolated, `${build}: the test server makes the page cross-origin isolated`);
		const r = await inPage(p, 'threadsBitwise', 2);
		for (const x of r)
			check(x.differing === 0 && x.backendN.build === build && x.backendN.threads === 2 && x.backend1.threads === 1,
				`${build}: ${x.model} at 1 and 2 threads bitwise equal (${x.elements} floats)`, JSON.stringify(x));
		const workers = p.workers().length;
		check(workers >= 1, `${build}: the build started its pthread workers (${workers} workers)`);
		await p.close();
	}
}

// The relaxed SIMD builds against their SIMD128 counterparts (single-threaded, and the
// pthreads ones at 2 threads): within the op tests' tolerances.
async function relaxed(browser, plain, isolated) {
	const get = async (base, build, numThreads) => {
		const p = await newPage(browser, base);
		await inPage(p, 'configure', { build, numThreads });
		const r = await inPage(p, 'outputBits', '/models/symbolic_batch/model.onnx', [16, 3, 8, 8]);
		await p.close();
		return r;
	};
	for (const [base, plainBuild, relaxedBuild, numThreads] of [[plain, 'simd', 'relaxed', 1], [isolated, 'threads', 'relaxed-threads', 2]]) {
		const a = await get(base, plainBuild, numThreads), b = await get(base, relaxedBuild, numThreads);
		let maxRel = 0, differ = 0;
		for (let i = 0; i < a.data.length; i++) {
			const d = Math.abs(a.data[i] - b.data[i]);
			if (d) differ++;
			if (!(d <= 1e-7 + 1e-3 * Math.abs(a.data[i]))) maxRel = Infinity;
			else if (a.data[i]) maxRel = Math.max(maxRel, d / Math.abs(a.data[i]));
		}
		check(a.backend.build === plainBuild && b.backend.build === relaxedBuild && a.data.length === b.data.length && maxRel !== Infinity,
			`relaxed: ${relaxedBuild} outputs within rtol 1e-3 / atol 1e-7 of ${plainBuild} at ${numThreads} thread(s) ` +
			`(${differ} of ${a.data.length} differ, largest rel ${maxRel.toExponential(1)})`);
	}
}

async function worker(browser, base) {
	const p = await newPage(browser, base);
	await inPage(p, 'configure', { numThreads: 1 });
	const off = await inPage(p, 'frameGaps', false);
	console.log(`  worker: ${JSON.stringify(off)}`);
	check(off.maxGapMs >= off.runMs * 0.5, `worker: without the proxy the page stalls (largest frame gap ${off.maxGapMs.toFixed(0)} ms during a ${off.runMs.toFixed(0)} ms run)`);
	// The same run in the worker: the page keeps painting. Asserted as ratios, not as a limit
	// in ms (other processes on a loaded machine can hold the page's thread off the CPU for
	// tens of ms whatever the page does): during the run the page paints at least 8 frames and
	// at least a quarter of the frames the idle page paints over as long right after, and its
	// largest gap is under a quarter of the run (without the proxy, checked above, it is half
	// the run or more). Up to 5 attempts; each is printed.
	let on, idle, ok = false;
	for (let attempt = 1; attempt <= 5 && !ok; attempt++) {
		on = await inPage(p, 'frameGaps', true, off.channels);
		idle = await inPage(p, 'idleGaps', on.runMs);
		console.log(`  worker: attempt ${attempt}: ${JSON.stringify(on)}; idle page: ${JSON.stringify(idle)}`);
		ok = on.backend.proxy && on.frames >= 8 && on.frames >= 0.25 * idle.frames && on.maxGapMs < 0.25 * on.runMs;
	}
	check(ok, `worker: with the proxy the page keeps painting (${on.frames} frames during a ${on.runMs.toFixed(0)} ms run, ` +
		`the idle page ${idle.frames} over as long; largest gap ${on.maxGapMs.toFixed(1)} ms, under a quarter of the run wanted)`);
	await p.close();
}

async function ortCompat(browser, base) {
	const { decodeTensorProto } = await import('../../js/node.mjs');
	const models = ['upsampler', 'symbolic_batch', 'd2s_dcr_int64', 'multi_use', 'weights_as_input'];
	const run = async (page) => {
		const p = await newPage(browser, base, page);
		const out = {};
		for (const m of models) {
			const dir = path.join(root, 'models', m, 'test_data_set_0');
			const inputs = [];
			for (const f of readdirSync(dir).filter((f) => f.startsWith('input_')).sort()) {
				const t = await decodeTensorProto(readFileSync(path.join(dir, f)));
				inputs.push({ type: t.type, dims: [...t.dims], b64: Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).toString('base64') });
			}
			out[m] = await p.evaluate(async (url, inputs) => {
				const { runExample } = await import('/tests/web/ort_example.mjs');
				const arrays = { float32: Float32Array, int64: BigInt64Array };
				const data = inputs.map((x) => ({ type: x.type, dims: x.dims,
					data: new arrays[x.type](Uint8Array.from(atob(x.b64), (c) => c.charCodeAt(0)).buffer) }));
				try {
					const r = await runExample(url, data);
					return r.map((o) => ({ name: o.name, type: o.type, dims: o.dims,
						data: o.type === 'int64' ? Array.from(o.data, String) : Array.from(o.data) }));
				} catch (e) {
					return { error: String(e.message).split('\n')[0] };
				}
			}, `/models/${m}/model.onnx`, inputs);
		}
		await p.close();
		return out;
	};
	const a = await run('tests/web/ort_example_onnxruntime.html');
	const b = await run('tests/web/ort_example_onnxrun.html');
	for (const m of models) {
		const dir = path.join(root, 'models', m, 'test_data_set_0');
		const outs = readdirSync(dir).filter((f) => f.startsWith('output_')).sort();
		// onnxruntime-web 1.30 has no int64 DepthToSpace: that model runs with onnxrun only.
		const runs = [['onnxrun', b[m]]];
		if (a[m].error) console.log(`  ort-compat: ${m}: onnxruntime-web cannot run it: ${a[m].error}`);
		else runs.push(['onnxruntime-web', a[m]]);
		let why = b[m].error ?? (runs.every(([, r]) => r.length === outs.length) ? '' : 'output count');
		for (let i = 0; !why && i < outs.length; i++) {
			const w = await decodeTensorProto(readFileSync(path.join(dir, outs[i])));
			const wd = w.type === 'int64' ? Array.from(w.data, String) : Array.from(w.data);
			for (const [who, out] of runs) {
				const r = out[i];
				const ok = r.type === w.type && r.dims.join() === w.dims.join() && r.data.every((v, k) =>
					w.type === 'int64' ? v === wd[k] : Math.abs(v - wd[k]) <= 1e-7 + 1e-3 * Math.abs(wd[k]));
				if (!ok) why = `${who}: output ${r.name} differs from ${outs[i]}`;
			}
		}
		check(!why, `ort-compat: ${m}: tests/web/ort_example.mjs gives the expected outputs with ${runs.map((r) => r[0]).join(' and ')}`, why);
	}
}

async function pack(browser) {
	const dir = path.join(root, 'build-web', 'pack');
	rmSync(dir, { recursive: true, force: true });
	mkdirSync(path.join(dir, 'app'), { recursive: true });
	const tgz = execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: path.join(root, 'js') }).toString().trim().split('\n').pop();
	const app = path.join(dir, 'app');
	writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'pack-test', private: true, type: 'module' }));
	execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', path.join(dir, tgz)], { cwd: app });
	cpSync(path.join(root, 'models', 'upsampler'), path.join(app, 'upsampler'), { recursive: true });
	copyFileSync(path.join(here, 'pack_app.mjs'), path.join(app, 'app.mjs'));
	copyFileSync(path.join(here, 'pack_app.html'), path.join(app, 'index.html'));
	const node = execFileSync('node', ['app.mjs'], { cwd: app }).toString().trim();
	check(/^ok /.test(node), `pack: ${tgz} installed offline; 'onnxrun' in node`, node);
	const server = await startServer({ root: app, port: 0 });
	const p = await browser.newPage();
	await p.goto(server.url);
	await p.waitForFunction('window.result !== undefined', { timeout: 120000 });
	const r = await p.evaluate(() => window.result);
	check(/^ok /.test(r), 'pack: the installed package in a page served from that folder', r);
	await p.close();
	await server.close();
}

async function demo(browser, base) {
	const p = await browser.newPage();
	await p.setViewport({ width: 1100, height: 700 });
	p.on('pageerror', (e) => console.log(`  page error: ${e.message}`));
	await p.goto(base + 'examples/web/');
	await p.waitForFunction('window.demo && window.demo.done', { timeout: 120000 });
	const d = await p.evaluate(() => ({
		status: document.querySelector('#status').textContent, input: Array.from(window.demo.input),
		pixels: Array.from(window.demo.outputPixels), dims: window.demo.outputDims, error: window.demo.error,
	}));
	check(!d.error && d.dims.join() === '1,3,128,128', `demo: upscaled the bundled image (${d.status})`, d.error ?? '');
	const shot = path.join(opt.artifacts, 'demo.png');
	await p.screenshot({ path: shot });
	console.log(`  demo: screenshot ${shot}`);
	// The CLI (wasm build under node) on the same input; its float output turned into pixels
	// the way the page does (smallest value to 0, largest to 255, round).
	const work = path.join(root, 'build-web', 'demo-cli');
	rmSync(work, { recursive: true, force: true });
	mkdirSync(work, { recursive: true });
	writeNpy(path.join(work, 'image.npy'), new Float32Array(d.input), [1, 3, 32, 32]);
	execFileSync('node', [path.join(root, 'build-wasm', 'onnxrun.js'), path.join(root, 'models', 'upsampler', 'model.onnx'),
		path.join(work, 'image.npy'), '-o', work, '--npy'], { stdio: 'pipe' });
	const y = readNpyF32(path.join(work, 'upscaled.npy'));
	const hw = 128 * 128;
	let off = 0, worst = 0, lo = Infinity, hi = -Infinity;
	for (const v of y) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
	for (let i = 0; i < hw; i++)
		for (let c = 0; c < 3; c++) {
			const want = Math.round((y[c * hw + i] - lo) * (255 / (hi - lo)));
			const got = d.pixels[i * 4 + c];
			worst = Math.max(worst, Math.abs(got - want));
			if (Math.abs(got - want) > 1) off++;
		}
	check(off === 0, `demo: the page's 128x128 pixels match the CLI's output (largest difference ${worst}/255; ±1 allowed for rounding at a .5 boundary)`, `${off} values off`);
	await p.close();
}

function writeNpy(file, data, dims) {
	let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims.join(', ')}), }`;
	header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
	const h = Buffer.alloc(10);
	h.write('\x93NUMPY', 0, 'latin1');
	h[6] = 1; h[7] = 0;
	h.writeUInt16LE(header.length, 8);
	writeFileSync(file, Buffer.concat([h, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function readNpyF32(file) {
	const b = readFileSync(file);
	const hl = b.readUInt16LE(8), start = 10 + hl;
	if (!/'<f4'/.test(b.toString('latin1', 10, start))) throw new Error(`${file}: not little-endian float32`);
	return new Float32Array(b.buffer.slice(b.byteOffset + start, b.byteOffset + b.length));
}

function types() {
	const tsc = path.join(npmTools, 'node_modules', '.bin', 'tsc');
	let out = '';
	let ok = true;
	try {
		out = execFileSync(tsc, ['--noEmit', '-p', path.join(here, 'tsconfig.json')], { stdio: 'pipe' }).toString();
	} catch (e) {
		ok = false;
		out = e.stdout.toString() + e.stderr.toString();
	}
	check(ok, 'types: tsc --noEmit over tests/web/types_check.ts with js/onnxrun.d.ts', out.trim());
}

if (isMain) {
	mkdirSync(opt.artifacts, { recursive: true });
	if (want('types')) types();
	const isolated = await startServer({ root, port: 0, isolated: true });
	const plain = await startServer({ root, port: 0, isolated: false });
	const browser = await launch();
	console.log(`chromium ${await browser.version()}; servers ${isolated.url} (isolated), ${plain.url}`);
	try {
		await conformance(browser, isolated.url, plain.url);
		if (want('bad-input')) await badInput(browser, plain.url);
		if (want('threads')) await threads(browser, isolated.url);
		if (want('relaxed')) await relaxed(browser, plain.url, isolated.url);
		if (want('worker')) await worker(browser, plain.url);
		if (want('ort-compat')) await ortCompat(browser, plain.url);
		if (want('pack')) await pack(browser);
		if (want('demo')) await demo(browser, isolated.url);
	} catch (e) {
		check(false, 'browser tests', e.stack);
	} finally {
		await browser.close();
		await isolated.close();
		await plain.close();
	}
	console.log(`web tests: ${passes} passed, ${failures} failed`);
	process.exitCode = failures ? 1 : 0;
}
