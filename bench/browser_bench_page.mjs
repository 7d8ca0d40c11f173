// browser_bench_page.mjs - the page side of bench/browser_bench.mjs: onnxrun (the package,
// js/onnxrun.mjs) and onnxruntime-web (its wasm backend) in the same page, on one suite case
// at a time, rounds alternating which goes first. Imported into bench/browser_bench.html.
import * as onnxrun from '/js/onnxrun.mjs';

let ort = null;

const median = (a) => { const s = [...a].sort((x, y) => x - y), n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };

// Settings of both runtimes; returns what each will run on.
export async function setup({ threads, ortUrl, ortWasm }) {
	onnxrun.env.wasm.numThreads = threads;
	ort = await import(ortUrl);
	ort.env.wasm.numThreads = threads;
	ort.env.wasm.simd = true;
	ort.env.wasm.proxy = false;
	ort.env.wasm.wasmPaths = ortWasm;
	ort.env.logLevel = 'error';
	return { crossOriginIsolated: globalThis.crossOriginIsolated === true, features: onnxrun.features(), ort: ort.env.versions?.web };
}

// Runs fn for warm-up (at least 2 runs, warmupMs), then timed runs until minMs (at least 5);
// returns the median and the last output. Each output tensor is disposed before the next run,
// untimed, as an application done with it would (ONNX Runtime Web's documentation asks for
// it; onnxrun refills a disposed output's buffer). keep: never dispose (every output a new
// buffer for both runtimes).
async function timeIt(fn, minMs, warmupMs, keep) {
	let out = null, t0 = performance.now(), n = 0;
	while (n < 2 || performance.now() - t0 < warmupMs) { if (!keep) out?.dispose(); out = await fn(); n++; }
	const times = [];
	t0 = performance.now();
	while (times.length < 5 || performance.now() - t0 < minMs) {
		if (!keep) out.dispose();
		const a = performance.now();
		out = await fn();
		times.push(performance.now() - a);
	}
	return { median: median(times), runs: times.length, out: out.data };
}

// One case: both sessions from the same model bytes and input; `rounds` alternating rounds.
export async function benchCase({ modelUrl, inputUrl, dims, threads, rounds, minMs, warmupMs, keep }) {
	const bytes = new Uint8Array(await (await fetch(modelUrl)).arrayBuffer());
	const x = new Float32Array(await (await fetch(inputUrl)).arrayBuffer());
	const a = await onnxrun.InferenceSession.create(bytes, { intraOpNumThreads: threads });
	const b = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all',
		executionMode: 'sequential', intraOpNumThreads: threads, interOpNumThreads: 1 });
	const fa = { [a.inputNames[0]]: new onnxrun.Tensor('float32', x, dims) };
	const fb = { [b.inputNames[0]]: new ort.Tensor('float32', x, dims) };
	// The output tensor (its data already copied out of the wasm heap by both runtimes).
	const runA = async () => (await a.run(fa))[a.outputNames[0]];
	const runB = async () => (await b.run(fb))[b.outputNames[0]];
	const ta = [], tb = [];
	let ra, rb;
	for (let r = 0; r < rounds; r++) {
		if (r % 2 === 0) { ra = await timeIt(runA, minMs, warmupMs, keep); rb = await timeIt(runB, minMs, warmupMs, keep); }
		else { rb = await timeIt(runB, minMs, warmupMs, keep); ra = await timeIt(runA, minMs, warmupMs, keep); }
		ta.push(ra.median);
		tb.push(rb.median);
	}
	// Kept outputs: what every run of either runtime must do at least, timed the same way: a
	// new buffer of the output's size holding a copy of bytes already in memory (slice of a
	// warm buffer, the cheapest copy the page has). On a machine whose first touch of a page is
	// slow, this is most of a kept-output run.
	let floor = null;
	if (keep) {
		const warm = new Float32Array(ra.out.length).fill(1);
		const runFloor = async () => ({ data: new Float32Array(warm.buffer.slice(0)), dispose() {} });
		const tf = [];
		for (let r = 0; r < rounds; r++) tf.push((await timeIt(runFloor, minMs, warmupMs, true)).median);
		floor = median(tf);
	}
	let maxd = 0, maxb = 0;
	for (let i = 0; i < rb.out.length; i++) {
		maxd = Math.max(maxd, Math.abs(ra.out[i] - rb.out[i]));
		maxb = Math.max(maxb, Math.abs(rb.out[i]));
	}
	const backend = a.backend;
	await a.release();
	await b.release();
	return { onnxrun_rounds: ta, ort_web_rounds: tb, onnxrun_ms: median(ta), ort_web_ms: median(tb), floor_ms: floor, backend,
		max_rel_diff: ra.out.length === rb.out.length ? maxd / (maxb || 1) : Infinity };
}
