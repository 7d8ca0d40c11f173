// page_tests.mjs - the browser side of tests/web/run.mjs: each export runs inside a page of
// headless Chromium through the package (js/onnxrun.mjs, served by examples/web/serve.mjs) and
// returns plain data for the runner to check and report.
import * as ort from '/js/onnxrun.mjs';

const { InferenceSession, Tensor, env, decodeTensorProto } = ort;

export function configure({ build, numThreads, proxy }) {
	if (build) env.wasm.forceBuild = build;
	if (numThreads !== undefined) env.wasm.numThreads = numThreads;
	env.wasm.proxy = !!proxy;
	return { crossOriginIsolated: globalThis.crossOriginIsolated === true, features: ort.features() };
}

async function fetchTensor(url) {
	const r = await fetch(url);
	if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
	return decodeTensorProto(new Uint8Array(await r.arrayBuffer()));
}

const FLOATS = new Set(['float32', 'float64', 'float16', 'bfloat16', 'complex64', 'complex128']);

// float16 / bfloat16 bits to a number
function halfToNumber(h, bf) {
	if (bf) return new Float32Array(new Uint32Array([h << 16]).buffer)[0];
	const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, f = h & 1023;
	if (e === 0) return s * f * 2 ** -24;
	if (e === 31) return f ? NaN : s * Infinity;
	return s * (1 + f / 1024) * 2 ** (e - 15);
}

// The CLI's comparison (src/cli/compare.c): dtype and dims equal; floats within
// atol + rtol * |expected| (NaN only with NaN); everything else equal. Returns '' or why not.
export function compare(got, want, rtol = 1e-3, atol = 1e-7) {
	if (got.type !== want.type) return `type ${got.type}, expected ${want.type}`;
	if (JSON.stringify(got.dims) !== JSON.stringify(want.dims)) return `dims [${got.dims}], expected [${want.dims}]`;
	const half = got.type === 'float16' || got.type === 'bfloat16';
	for (let i = 0; i < want.data.length; i++) {
		let g = got.data[i], e = want.data[i];
		if (FLOATS.has(got.type)) {
			if (half) { g = halfToNumber(g, got.type === 'bfloat16'); e = halfToNumber(e, got.type === 'bfloat16'); }
			if (Number.isNaN(e) || Number.isNaN(g)) {
				if (Number.isNaN(e) && Number.isNaN(g)) continue;
				return `element ${i}: ${g}, expected ${e}`;
			}
			if (g === e || Math.abs(g - e) <= atol + rtol * Math.abs(e)) continue;
			return `element ${i}: ${g}, expected ${e} (rtol ${rtol}, atol ${atol})`;
		}
		if (g !== e) return `element ${i}: ${g}, expected ${e}`;
	}
	return '';
}

// cases: [{ name, model, sets: [{ inputs: [url], outputs: [url] }] }]
export async function conformance(cases) {
	const results = [];
	let backend = null;
	for (const c of cases) {
		let session;
		try {
			session = await InferenceSession.create(c.model);
			backend = session.backend;
			for (const [k, set] of c.sets.entries()) {
				const feeds = {};
				const inputs = await Promise.all(set.inputs.map(fetchTensor));
				inputs.forEach((t, i) => { feeds[session.inputNames[i]] = t; });
				const out = await session.run(feeds);
				const wants = await Promise.all(set.outputs.map(fetchTensor));
				wants.forEach((w, i) => {
					const why = compare(out[session.outputNames[i]], w);
					results.push({ name: `${c.name}/set${k}/${session.outputNames[i]}`, ok: !why, why });
				});
			}
		} catch (e) {
			results.push({ name: c.name, ok: false, why: `${e.name}: ${e.message}` });
		} finally {
			await session?.release();
		}
	}
	return { results, backend };
}

// Runs promise-returning fn and reports how it settled: { settled, ok, isError, name, message }.
// A promise still pending after `hangMs` is reported as not settled (a hang, not a slow run:
// each call is a few milliseconds of work).
async function settle(fn, hangMs = 60000) {
	let timer;
	const hang = new Promise((r) => { timer = setTimeout(() => r({ settled: false }), hangMs); });
	const run = (async () => {
		try {
			await fn();
			return { settled: true, ok: true };
		} catch (e) {
			return { settled: true, ok: false, isError: e instanceof Error, name: e?.name, message: String(e?.message ?? e), status: e?.status };
		}
	})();
	const r = await Promise.race([run, hang]);
	clearTimeout(timer);
	return r;
}

// Bad input through the API: each must reject (or throw) an Error with a clear message, and
// the module must stay usable afterwards (a good run at the end).
export async function badInput() {
	const model = new Uint8Array(await (await fetch('/models/upsampler/model.onnx')).arrayBuffer());
	const good = await fetchTensor('/models/upsampler/test_data_set_0/input_0.pb');
	const r = {};
	r.truncatedModel = await settle(() => InferenceSession.create(model.slice(0, model.length >> 1)));
	r.emptyModel = await settle(() => InferenceSession.create(new Uint8Array(0)));
	r.garbageModel = await settle(() => InferenceSession.create(new Uint8Array([8, 7, 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f])));
	r.missingUrl = await settle(() => InferenceSession.create('/models/no_such_model.onnx'));
	const s = await InferenceSession.create(model);
	r.wrongDtype = await settle(() => s.run({ image: new Tensor('float64', new Float64Array(3072), [1, 3, 32, 32]) }));
	r.wrongDims = await settle(() => s.run({ image: new Tensor('float32', new Float32Array(3 * 16 * 64), [1, 3, 16, 64]) }));
	r.wrongRank = await settle(() => s.run({ image: new Tensor('float32', new Float32Array(3072), [3, 32, 32]) }));
	r.wrongName = await settle(() => s.run({ image: good, picture: good }));
	r.missingInput = await settle(() => s.run({}));
	r.notATensor = await settle(() => s.run({ image: { type: 'float32', data: 'x', dims: [1] } }));
	r.lengthMismatch = await settle(() => s.run({ image: { type: 'float32', data: new Float32Array(7), dims: [1, 3, 32, 32] } }));
	const buf = new Float32Array(3072);
	const detachable = new Tensor('float32', buf, [1, 3, 32, 32]);
	structuredClone(buf.buffer, { transfer: [buf.buffer] }); // detaches buf
	r.detachedBuffer = await settle(() => s.run({ image: detachable }));
	r.detachedModel = await settle(() => {
		const m = model.slice();
		structuredClone(m.buffer, { transfer: [m.buffer] });
		return InferenceSession.create(m);
	});
	r.tensorBadType = await settle(async () => new Tensor('float128', new Float32Array(1), [1]));
	r.tensorBadDims = await settle(async () => new Tensor('float32', new Float32Array(4), [2, -2]));
	const after = await s.run({ image: good }); // still usable after every error above
	r.goodRunAfterErrors = { settled: true, ok: after.upscaled.dims.join() === '1,3,128,128' };
	await s.release();
	r.runAfterRelease = await settle(() => s.run({ image: good }));
	r.releaseTwice = await settle(() => s.release());
	return r;
}

// Runs the same inputs through sessions at 1 and `threads` threads (a pthreads build) and
// compares the outputs bit for bit. Inputs: the upsampler's test input and fixed-seed values
// for symbolic_batch at N = 64.
export async function threadsBitwise(threads) {
	const models = [['/models/upsampler/model.onnx', [1, 3, 32, 32]], ['/models/symbolic_batch/model.onnx', [64, 3, 8, 8]]];
	const out = [];
	for (const [url, dims] of models) {
		const x = new Float32Array(dims.reduce((a, b) => a * b));
		let seed = 12345;
		for (let i = 0; i < x.length; i++) { seed = (seed * 1103515245 + 12345) >>> 0; x[i] = seed / 2 ** 32 - 0.5; }
		const s1 = await InferenceSession.create(url, { intraOpNumThreads: 1 });
		const sn = await InferenceSession.create(url, { intraOpNumThreads: threads });
		const feeds = { [s1.inputNames[0]]: new Tensor('float32', x, dims) };
		const a = (await s1.run(feeds))[s1.outputNames[0]].data;
		const b = (await sn.run(feeds))[sn.outputNames[0]].data;
		const ua = new Uint32Array(a.buffer), ub = new Uint32Array(b.buffer);
		let diff = ua.length === ub.length ? 0 : -1;
		for (let i = 0; diff >= 0 && i < ua.length; i++) if (ua[i] !== ub[i]) diff++;
		out.push({ model: url, elements: a.length, differing: diff, backend1: s1.backend, backendN: sn.backend });
		await s1.release();
		await sn.release();
	}
	return out;
}

// Output of `url` for the fixed-seed input, as bytes (the runner compares builds).
export async function outputBits(url, dims) {
	const x = new Float32Array(dims.reduce((a, b) => a * b));
	let seed = 777;
	for (let i = 0; i < x.length; i++) { seed = (seed * 1103515245 + 12345) >>> 0; x[i] = seed / 2 ** 32 - 0.5; }
	const s = await InferenceSession.create(url);
	const y = (await s.run({ [s.inputNames[0]]: new Tensor('float32', x, dims) }))[s.outputNames[0]];
	const backend = s.backend;
	await s.release();
	return { backend, data: Array.from(y.data) };
}

// ---- a model built here: one ConvTranspose with many channels (much work, little I/O) ----
// Protobuf wire format: field key = (number << 3) | type; 0 varint, 2 length-delimited. Parts
// are Uint8Arrays (the weights are megabytes: no JS arrays of numbers, whose garbage would
// bring garbage-collection pauses into the measurement).
function cat(...parts) {
	const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
	let o = 0;
	for (const p of parts) { out.set(p, o); o += p.length; }
	return out;
}
function varint(n) {
	const out = [];
	let v = BigInt(n);
	do { let b = Number(v & 127n); v >>= 7n; if (v) b |= 128; out.push(b); } while (v);
	return new Uint8Array(out);
}
const field = (num, ...parts) => { const body = cat(...parts); return cat(varint((num << 3) | 2), varint(body.length), body); };
const fieldInt = (num, n) => cat(varint(num << 3), varint(n));
const str = (num, s) => field(num, new TextEncoder().encode(s));
function valueInfo(name, dims) { // ValueInfoProto: name 1, type 2 (TypeProto.tensor_type 1: elem_type 1, shape 2)
	const shape = cat(...dims.map((d) => field(1, fieldInt(1, d))));
	return cat(str(1, name), field(2, field(1, fieldInt(1, 1), field(2, shape))));
}
// ModelProto (ir_version 7, opset 13) of Y = ConvTranspose(X, W) with W [c, c, 4, 4] of fixed-seed
// values, strides 2, pads 1: X [1, c, h, h] -> Y [1, c, 2h, 2h]. 2 * c^2 * 16 * h^2 multiply-adds.
export function convTransposeModel(c, h) {
	const w = new Float32Array(c * c * 16);
	let seed = 99;
	for (let i = 0; i < w.length; i++) { seed = (seed * 1103515245 + 12345) >>> 0; w[i] = (seed / 2 ** 32 - 0.5) * 0.05; }
	const ints = (name, v) => cat(str(1, name), ...v.map((x) => fieldInt(8, x)), fieldInt(20, 7));
	const node = cat(str(1, 'x'), str(1, 'w'), str(2, 'y'), str(3, 'up'), str(4, 'ConvTranspose'),
		field(5, ints('strides', [2, 2])), field(5, ints('pads', [1, 1, 1, 1])), field(5, ints('kernel_shape', [4, 4])));
	const init = cat(...[c, c, 4, 4].map((d) => fieldInt(1, d)), fieldInt(2, 1), str(8, 'w'), field(9, new Uint8Array(w.buffer)));
	const graph = cat(field(1, node), str(2, 'g'), field(5, init), field(11, valueInfo('x', [1, c, h, h])),
		field(12, valueInfo('y', [1, c, 2 * h, 2 * h])));
	return cat(fieldInt(1, 7), field(7, graph), field(8, fieldInt(2, 13)));
}

// Main-thread responsiveness during about a second of model work: requestAnimationFrame
// timestamps are recorded while a session runs convTransposeModel(c, 44) once (4 MB in, 16 MB
// out at c = 512). c = 0: chosen on this machine, doubled from 64 until a run takes at least
// 60% of `targetMs` (the faster of two), at most 512. Returns the largest gap between
// frames and c.
export async function frameGaps(proxy, channels = 0, targetMs = 1000) {
	env.wasm.proxy = proxy;
	const h = 44;
	let c = channels || 64, s;
	const feeds = () => ({ x: new Tensor('float32', new Float32Array(c * h * h).fill(0.5), [1, c, h, h]) });
	for (;;) {
		s = await InferenceSession.create(convTransposeModel(c, h));
		if (channels || c >= 512) break;
		let t = Infinity;
		for (let k = 0; k < 2; k++) {
			const t0 = performance.now();
			await s.run(feeds());
			t = Math.min(t, performance.now() - t0);
		}
		if (t >= 0.6 * targetMs) break;
		await s.release();
		c *= 2;
	}
	await s.run(feeds()); // warm: memory grown, plan made
	const x = feeds();
	const frames = [];
	let on = true;
	const tick = (ts) => { frames.push(ts); if (on) requestAnimationFrame(tick); };
	await new Promise((r) => requestAnimationFrame((ts) => { frames.push(ts); r(); }));
	requestAnimationFrame(tick);
	const t0 = performance.now();
	await s.run(x);
	const runMs = performance.now() - t0;
	await new Promise((r) => requestAnimationFrame(() => r()));
	on = false;
	let maxGap = 0;
	for (let i = 1; i < frames.length; i++) maxGap = Math.max(maxGap, frames[i] - frames[i - 1]);
	const backend = s.backend;
	await s.release();
	return { proxy, channels: c, runMs, frames: frames.length, maxGapMs: maxGap, backend };
}

// The largest requestAnimationFrame gap of this page over `ms` while it does nothing: what
// the machine gives an idle page (other processes can hold its thread off the CPU).
export async function idleGaps(ms) {
	const frames = [];
	const t0 = performance.now();
	await new Promise((resolve) => {
		const tick = (ts) => { frames.push(ts); if (performance.now() - t0 < ms) requestAnimationFrame(tick); else resolve(); };
		requestAnimationFrame(tick);
	});
	let maxGap = 0;
	for (let i = 1; i < frames.length; i++) maxGap = Math.max(maxGap, frames[i] - frames[i - 1]);
	return { ms, frames: frames.length, maxGapMs: maxGap };
}
