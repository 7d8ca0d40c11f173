// onnxrun.mjs - the onnxrun npm package: ONNX models in the browser (and node) through the
// WebAssembly build, with ONNX Runtime Web's API shape (docs/web.md).
//
//   import * as ort from 'onnxrun';
//   const session = await ort.InferenceSession.create('model.onnx');   // URL or bytes
//   const x = new ort.Tensor('float32', new Float32Array(3 * 32 * 32), [1, 3, 32, 32]);
//   const { upscaled } = await session.run({ image: x });               // { name: Tensor }
//   await session.release();
//
// One wasm instance per build serves every session on this thread; runs are synchronous
// inside (the promise settles after the run), unless env.wasm.proxy moves sessions into a
// Web Worker (js/worker.mjs). The build is picked once, at the first session:
//   - threads (pthreads) when env.wasm.numThreads != 1, the page is cross-origin isolated
//     and SharedArrayBuffer exists (browsers only): 'relaxed-threads' where relaxed SIMD is
//     (below), else 'threads';
//   - else 'relaxed' (relaxed SIMD FMA) when the engine validates f32x4.relaxed_madd and
//     env.wasm.relaxedSimd is not false;
//   - else 'simd' (SIMD128).
// Errors are OnnxrunError (an Error) with the library's message, which names the node or
// input at fault, and `status`, the library's status string ('invalid input', ...).
// This file imports nothing platform-specific; js/node.mjs adds file reading under node.

export const version = '0.1.0';

// Library dtype codes (include/onnxrun.h) by tensor type name, with the typed array of the
// data and the numbers per element (2 for the complex types).
const TYPES = {
	float32: { code: 1, array: Float32Array, per: 1 },
	uint8: { code: 2, array: Uint8Array, per: 1 },
	int8: { code: 3, array: Int8Array, per: 1 },
	uint16: { code: 4, array: Uint16Array, per: 1 },
	int16: { code: 5, array: Int16Array, per: 1 },
	int32: { code: 6, array: Int32Array, per: 1 },
	int64: { code: 7, array: BigInt64Array, per: 1 },
	string: { code: 8, array: Array, per: 1 },
	bool: { code: 9, array: Uint8Array, per: 1 },
	float16: { code: 10, array: Uint16Array, per: 1 },
	float64: { code: 11, array: Float64Array, per: 1 },
	uint32: { code: 12, array: Uint32Array, per: 1 },
	uint64: { code: 13, array: BigUint64Array, per: 1 },
	complex64: { code: 14, array: Float32Array, per: 2 },
	complex128: { code: 15, array: Float64Array, per: 2 },
	bfloat16: { code: 16, array: Uint16Array, per: 1 },
};
const TYPE_BY_CODE = Object.fromEntries(Object.entries(TYPES).map(([name, t]) => [t.code, name]));
// The type a typed array stands for when new Tensor(data, dims) gives no type.
const TYPE_OF_ARRAY = new Map([[Float32Array, 'float32'], [Float64Array, 'float64'], [Int8Array, 'int8'],
	[Uint8Array, 'uint8'], [Uint8ClampedArray, 'uint8'], [Int16Array, 'int16'], [Uint16Array, 'uint16'],
	[Int32Array, 'int32'], [Uint32Array, 'uint32'], [BigInt64Array, 'int64'], [BigUint64Array, 'uint64']]);

export class OnnxrunError extends Error {
	constructor(status, message) {
		super(message);
		this.name = 'OnnxrunError';
		this.status = status;
	}
}

const argError = (msg) => new OnnxrunError('invalid argument', msg);

// Whether a typed array's buffer was detached (transferred to a worker, or a wasm memory
// that grew): ArrayBuffer.prototype.detached where the engine has it, else an empty buffer
// behind a view that should hold elements.
function isDetached(a, expected) {
	const b = a.buffer;
	if (b && typeof b.detached === 'boolean')
		return b.detached;
	return expected > 0 && a.length === 0 && b && b.byteLength === 0;
}

export class Tensor {
	// new Tensor(type, data, dims) or new Tensor(data, dims) (type from the typed array; a
	// string[] is 'string'). dims default to [data.length]. data is kept, not copied (as ONNX
	// Runtime Web does); a number[] is converted to the type's array.
	constructor(a, b, c) {
		let type, data, dims;
		if (typeof a === 'string') [type, data, dims] = [a, b, c];
		else {
			[data, dims] = [a, b];
			type = Array.isArray(data) && data.every((s) => typeof s === 'string') ? 'string'
				: TYPE_OF_ARRAY.get(data?.constructor);
			if (!type) throw new TypeError('Tensor: cannot infer the type of the data; pass new Tensor(type, data, dims)');
		}
		const t = TYPES[type];
		if (!t) throw new TypeError(`Tensor: unsupported type '${type}' (one of ${Object.keys(TYPES).join(', ')})`);
		if (type === 'string') {
			if (!Array.isArray(data) || !data.every((s) => typeof s === 'string'))
				throw new TypeError("Tensor: a 'string' tensor's data must be a string[]");
		} else if (Array.isArray(data)) {
			data = t.array.from(data, t.array === BigInt64Array || t.array === BigUint64Array ? BigInt : Number);
		} else if (!(data instanceof t.array) && !(type === 'uint8' && data instanceof Uint8ClampedArray)) {
			throw new TypeError(`Tensor: a '${type}' tensor's data must be a ${t.array.name}, got ${data?.constructor?.name ?? typeof data}`);
		}
		if (dims === undefined) dims = [data.length / t.per];
		if (!Array.isArray(dims) || !dims.every((d) => Number.isSafeInteger(d) && d >= 0))
			throw new TypeError(`Tensor: dims must be an array of integers >= 0, got ${JSON.stringify(dims)}`);
		const size = dims.reduce((x, y) => x * y, 1);
		if (isDetached(data, size))
			throw new TypeError('Tensor: the data\'s buffer is detached');
		if (size * t.per !== data.length)
			throw new RangeError(`Tensor: dims [${dims}] hold ${size} elements, the ${type} data ${data.length / t.per}`);
		this.type = type;
		this.data = data;
		this.dims = Object.freeze([...dims]);
		this.size = size;
		this.location = 'cpu';
	}

	async getData() { return this.data; }

	// Ends the tensor's use: its data becomes empty. An output of a session (on the page's
	// thread) hands its buffer back to the session, whose next run of the same output size
	// fills it instead of a new one: a fresh multi-megabyte buffer costs its page faults on
	// every run (docs/web.md).
	dispose() {
		const pool = RECYCLE.get(this);
		if (pool && this.data?.buffer instanceof ArrayBuffer) pool.give(this.data.buffer);
		RECYCLE.delete(this);
		if (ArrayBuffer.isView(this.data)) this.data = new this.data.constructor(0);
		else if (Array.isArray(this.data)) this.data = [];
	}
}

// Output tensors -> the pool of the session that made them (see Tensor.dispose).
const RECYCLE = new WeakMap();

// Disposed output buffers of one session by byte length, a few per size.
class BufferPool {
	constructor() { this.free = new Map(); }
	give(b) {
		const list = this.free.get(b.byteLength) ?? [];
		if (list.length < 2 && !list.includes(b)) list.push(b);
		this.free.set(b.byteLength, list);
	}
	take(n) { return this.free.get(n)?.pop() ?? null; }
	clear() { this.free.clear(); }
}

// Settings read when the first session is created (the build is chosen once per thread).
export const env = {
	wasm: {
		// Threads per session: 0 = min(4, navigator.hardwareConcurrency). Threads need the
		// threads build, which needs a cross-origin isolated page; else 1.
		numThreads: 0,
		// false: never the relaxed SIMD build.
		relaxedSimd: true,
		// true (browsers): sessions live in a Web Worker (js/worker.mjs); run() does not block.
		proxy: false,
		// Folder (URL, or a path under node) holding the build files; default: dist/ beside
		// this file.
		wasmPaths: undefined,
		// Which build runs, once chosen: 'simd' | 'relaxed' | 'threads' | 'relaxed-threads'.
		build: undefined,
		// Set to one of those to skip the choice (tests, benchmarks).
		forceBuild: undefined,
	},
	logLevel: 'warning',
	versions: { onnxrun: version },
};

// Hooks of js/node.mjs: read a file URL's bytes; the default location of the build files.
export const platform = {
	readFile: null,
	isNode: typeof process === 'object' && !!process.versions?.node && typeof window === 'undefined',
};

// A module with one f32x4.relaxed_madd (0xfd 0x105): valid only where relaxed SIMD is.
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 19, 1,
	17, 0, 65, 0, 253, 17, 65, 0, 253, 17, 65, 0, 253, 17, 253, 133, 2, 11]);
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1,
	8, 0, 65, 0, 253, 15, 253, 98, 11]);

export function features() {
	const g = globalThis;
	return {
		simd: WebAssembly.validate(SIMD_PROBE),
		relaxedSimd: WebAssembly.validate(RELAXED_PROBE),
		threads: !platform.isNode && g.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function'
			&& typeof Worker === 'function',
		hardwareConcurrency: g.navigator?.hardwareConcurrency ?? 1,
	};
}

function wantedThreads() {
	const n = env.wasm.numThreads;
	if (n >= 1) return Math.floor(n);
	return Math.max(1, Math.min(4, features().hardwareConcurrency));
}

function pickBuild() {
	const f = features();
	if (!f.simd) throw new OnnxrunError('unsupported', 'this engine has no WebAssembly SIMD128, which every onnxrun build needs');
	const relaxed = env.wasm.relaxedSimd !== false && f.relaxedSimd;
	if (wantedThreads() > 1 && f.threads) return relaxed ? 'relaxed-threads' : 'threads';
	return relaxed ? 'relaxed' : 'simd';
}

function baseUrl() {
	const p = env.wasm.wasmPaths;
	if (p === undefined) return new URL('./dist/', import.meta.url);
	if (p instanceof URL) return p;
	if (platform.isNode && !/^[a-z][a-z0-9+.-]*:/i.test(p))
		return platform.pathToUrl(p.endsWith('/') ? p : p + '/');
	return new URL(p.endsWith('/') ? p : p + '/', globalThis.location?.href);
}

async function readBytes(url) {
	if (url.protocol === 'file:' && platform.readFile) return platform.readFile(url);
	const r = await fetch(url);
	if (!r.ok) throw new OnnxrunError('io', `cannot fetch ${url}: HTTP ${r.status}`);
	return new Uint8Array(await r.arrayBuffer());
}

// ---- the wasm module ---------------------------------------------------------------------

let runtime = null; // Promise<Runtime>

// The package's builds (js/CMakeLists.txt); the two ending in 'threads' are the pthreads ones.
const BUILDS = ['simd', 'relaxed', 'threads', 'relaxed-threads'];

class Runtime {
	constructor(m, memory, build, threads) {
		this.m = m;
		this.memory = memory;
		this.build = build;
		this.threads = threads;
		this.broken = null; // the trap that made the instance unusable
		const L = (i) => m._onnxrun_js_layout(i);
		this.L = { infoSize: L(0), infoName: L(1), infoDtype: L(2), infoRank: L(3), infoDims: L(4), dimSize: L(5), dimValue: L(6), dimParam: L(7) };
	}

	// Fresh views: memory may have grown (and with threads it is a SharedArrayBuffer).
	u8() { return new Uint8Array(this.memory.buffer); }
	i32() { return new Int32Array(this.memory.buffer); }
	u32() { return new Uint32Array(this.memory.buffer); }

	str(p) {
		if (!p) return '';
		const u8 = this.u8();
		let e = p;
		while (u8[e]) e++;
		return new TextDecoder().decode(u8.slice(p, e));
	}

	cstr(s) {
		const b = new TextEncoder().encode(s);
		const p = this.m._malloc(b.length + 1);
		if (!p) throw new OnnxrunError('out of memory', 'out of wasm memory');
		const u8 = this.u8();
		u8.set(b, p);
		u8[p + b.length] = 0;
		return p;
	}

	malloc(n) {
		const p = this.m._malloc(Math.max(n, 1));
		if (!p) throw new OnnxrunError('out of memory', `out of wasm memory (${n} bytes)`);
		return p;
	}

	status(st) { return this.str(this.m._onnxrun_status_str(st)); }

	// Runs fn(m); a wasm trap (a bug, or memory exhausted inside) becomes an OnnxrunError and
	// marks the instance unusable, so no later call runs on a corrupt heap.
	call(fn) {
		if (this.broken) throw new OnnxrunError('runtime', `onnxrun's wasm instance stopped after an earlier failure: ${this.broken}`);
		try {
			return fn(this.m);
		} catch (e) {
			if (e instanceof OnnxrunError || e instanceof TypeError || e instanceof RangeError) throw e;
			this.broken = String(e?.message ?? e);
			throw new OnnxrunError('runtime', `onnxrun's wasm instance failed: ${this.broken}`);
		}
	}
}

async function loadRuntime() {
	const forced = env.wasm.forceBuild;
	if (forced !== undefined && !BUILDS.includes(forced))
		throw argError(`env.wasm.forceBuild: '${forced}' is not one of ${BUILDS.join(', ')}`);
	const build = forced ?? pickBuild();
	const threads = build.endsWith('threads') ? wantedThreads() : 1;
	const base = baseUrl();
	const name = `onnxrun-${build}`;
	const factory = (await import(new URL(`${name}.mjs`, base).href)).default;
	const wasmBytes = platform.isNode ? await readBytes(new URL(`${name}.wasm`, base)) : null;
	let memory = null;
	const m = await new Promise((resolve, reject) => {
		const opts = {
			locateFile: (f) => new URL(f, base).href,
			mainScriptUrlOrBlob: new URL(`${name}.js`, base).href,
			onnxrunPoolSize: threads - 1,
			print: () => {},
			printErr: (s) => { if (env.logLevel === 'verbose') console.warn(`onnxrun: ${s}`); },
			onAbort: (what) => reject(new OnnxrunError('runtime', `onnxrun's wasm module failed to start: ${what}`)),
			instantiateWasm(imports, ok) {
				(async () => {
					let r;
					if (wasmBytes) r = await WebAssembly.instantiate(wasmBytes, imports);
					else {
						const url = new URL(`${name}.wasm`, base);
						try {
							r = await WebAssembly.instantiateStreaming(fetch(url), imports);
						} catch {
							r = await WebAssembly.instantiate(await readBytes(url), imports);
						}
					}
					// The memory: exported, or imported (threads); emscripten minifies the names.
					const isMem = (v) => v instanceof WebAssembly.Memory;
					memory = Object.values(r.instance.exports).find(isMem)
						|| Object.values(imports).flatMap((ns) => Object.values(ns)).find(isMem);
					ok(r.instance, r.module);
				})().catch((e) => reject(new OnnxrunError('runtime', `cannot load ${name}.wasm: ${e?.message ?? e}`)));
				return {};
			},
		};
		factory(opts).then(resolve, (e) => reject(new OnnxrunError('runtime', `cannot start ${name}: ${e?.message ?? e}`)));
	});
	env.wasm.build = build;
	return new Runtime(m, memory, build, threads);
}

export function getRuntime() {
	if (!runtime) {
		runtime = loadRuntime();
		runtime.catch(() => { runtime = null; });
	}
	return runtime;
}

// ---- sessions ----------------------------------------------------------------------------

function toBytes(x) {
	if (ArrayBuffer.isView(x) && isDetached(x, 1) || x instanceof ArrayBuffer && x.detached === true)
		throw argError('the model buffer is empty or detached');
	if (x instanceof ArrayBuffer) return new Uint8Array(x);
	if (typeof SharedArrayBuffer === 'function' && x instanceof SharedArrayBuffer) return new Uint8Array(x);
	if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
	return null;
}

async function modelBytes(src) {
	if (typeof src === 'string' || src instanceof URL) {
		let url;
		if (src instanceof URL) url = src;
		else if (platform.isNode && !/^[a-z][a-z0-9+.-]*:/i.test(src)) url = platform.pathToUrl(src);
		else url = new URL(src, globalThis.location?.href);
		return readBytes(url);
	}
	const b = toBytes(src);
	if (!b) throw argError('InferenceSession.create: expected a URL, a path (node), an ArrayBuffer or a Uint8Array');
	if (isDetached(b, 1) || b.byteLength === 0)
		throw argError('InferenceSession.create: the model buffer is empty or detached');
	return b;
}

// Reads struct onnxrun_value_info at p into { name, type, shape } (shape entries: numbers,
// or the dim's symbolic name, or null when unknown).
function readInfo(rt, p) {
	const i32 = rt.i32(), L = rt.L;
	const rank = i32[(p + L.infoRank) >> 2], dimsP = i32[(p + L.infoDims) >> 2] >>> 0;
	const shape = [];
	for (let d = 0; d < rank; d++) {
		const dp = dimsP + d * L.dimSize;
		const v = Number(new BigInt64Array(rt.memory.buffer, dp + L.dimValue, 1)[0]);
		shape.push(v >= 0 ? v : (rt.str(i32[(dp + L.dimParam) >> 2] >>> 0) || null));
	}
	return {
		name: rt.str(i32[(p + L.infoName) >> 2] >>> 0),
		type: TYPE_BY_CODE[i32[(p + L.infoDtype) >> 2]] ?? 'undefined',
		shape: rank >= 0 ? shape : undefined,
		isTensor: true,
	};
}

// A session on this thread's wasm instance.
class LocalSession {
	static async create(src, options = {}) {
		checkOptions(options);
		const bytes = await modelBytes(src);
		const rt = await getRuntime();
		return rt.call((m) => {
			const slot = rt.malloc(4);
			let envP = 0, model = 0, session = 0, buf = 0;
			try {
				let st = m._onnxrun_env_create(0, slot);
				if (st) throw new OnnxrunError(rt.status(st), 'cannot create an onnxrun env');
				envP = rt.u32()[slot >> 2];
				buf = rt.malloc(bytes.length);
				rt.u8().set(bytes, buf);
				st = m._onnxrun_model_load_buffer(envP, buf, bytes.length, 0, slot);
				if (st) throw new OnnxrunError(rt.status(st), rt.str(m._onnxrun_env_error(envP)));
				model = rt.u32()[slot >> 2];
				m._free(buf);
				buf = 0;
				st = m._onnxrun_session_create(model, slot);
				if (st) throw new OnnxrunError(rt.status(st), rt.str(m._onnxrun_env_error(envP)));
				session = rt.u32()[slot >> 2];
				const threads = Math.min(rt.threads, options.intraOpNumThreads >= 1 ? options.intraOpNumThreads : rt.threads);
				st = m._onnxrun_session_set_threads(session, threads);
				if (st) throw new OnnxrunError(rt.status(st), rt.str(m._onnxrun_session_error(session)));
				const s = new LocalSession(rt, envP, model, session, threads);
				envP = model = session = 0;
				return s;
			} finally {
				m._free(slot);
				if (buf) m._free(buf);
				if (session) m._onnxrun_session_free(session);
				if (model) m._onnxrun_model_free(model);
				if (envP) m._onnxrun_env_free(envP);
			}
		});
	}

	constructor(rt, envP, model, session, threads) {
		Object.assign(this, { rt, envP, model, session, threads });
		this.bound = new Map(); // input name -> tensor handle the session borrows
		this.pool = new BufferPool(); // disposed outputs' buffers
		const m = rt.m, p = rt.malloc(rt.L.infoSize);
		const infos = (count, get) => {
			const out = [];
			for (let i = 0; i < count; i++) {
				const st = get(model, i, p);
				if (st) throw new OnnxrunError(rt.status(st), `model input/output ${i}: no info`);
				out.push(readInfo(rt, p));
			}
			return out;
		};
		try {
			this.inputMetadata = infos(m._onnxrun_model_input_count(model), m._onnxrun_model_input_info);
			this.outputMetadata = infos(m._onnxrun_model_output_count(model), m._onnxrun_model_output_info);
		} finally {
			m._free(p);
		}
	}

	get released() { return !this.session; }

	run(feeds) {
		const rt = this.rt;
		if (!this.session) throw new OnnxrunError('invalid argument', 'session.run: the session was released');
		if (!feeds || typeof feeds !== 'object') throw argError('session.run: feeds must be an object { inputName: Tensor }');
		for (const info of this.inputMetadata)
			if (!(info.name in feeds)) throw new OnnxrunError('invalid input', `session.run: input '${info.name}' is missing from the feeds`);
		return rt.call((m) => {
			const fresh = [];
			try {
				for (const [name, t] of Object.entries(feeds)) {
					const old = this.bound.get(name);
					if (old && this.refill(old, name, t)) { // same type and dims: the data copied in place
						const pn = rt.cstr(name);
						const st = m._onnxrun_session_set_input_by_name(this.session, pn, old);
						m._free(pn);
						if (st) throw new OnnxrunError(rt.status(st), rt.str(m._onnxrun_session_error(this.session)));
						continue;
					}
					const h = this.tensorIn(name, t);
					fresh.push(h);
					const pn = rt.cstr(name);
					const st = m._onnxrun_session_set_input_by_name(this.session, pn, h);
					m._free(pn);
					if (st) throw new OnnxrunError(rt.status(st), rt.str(m._onnxrun_session_error(this.session)));
					this.bound.set(name, h);
					fresh.splice(fresh.indexOf(h), 1);
					if (old) m._onnxrun_tensor_free(old);
				}
			} finally {
				for (const h of fresh) m._onnxrun_tensor_free(h);
			}
			const st = m._onnxrun_session_run(this.session);
			if (st) throw new OnnxrunError(rt.status(st), rt.str(m._onnxrun_session_error(this.session)));
			const out = {}, po = rt.malloc(4);
			try {
				for (let i = 0; i < this.outputMetadata.length; i++) {
					const s2 = m._onnxrun_session_output(this.session, i, po);
					if (s2) throw new OnnxrunError(rt.status(s2), rt.str(m._onnxrun_session_error(this.session)));
					out[this.outputMetadata[i].name] = this.tensorOut(rt.u32()[po >> 2]);
				}
			} finally {
				m._free(po);
			}
			return out;
		});
	}

	// Copies the data of the JS tensor t into the library tensor h when both have the same
	// numeric type and dims (a run with new values of the same shape: no allocation, no
	// zero-fill); returns false otherwise.
	refill(h, name, t) {
		const rt = this.rt, m = rt.m, info = TYPES[t?.type];
		if (!info || t.type === 'string' || !ArrayBuffer.isView(t.data) || !Array.isArray(t.dims)) return false;
		if (m._onnxrun_tensor_dtype(h) !== info.code || m._onnxrun_tensor_rank(h) !== t.dims.length) return false;
		const dims = new BigInt64Array(rt.memory.buffer, m._onnxrun_tensor_dims(h), t.dims.length);
		if (!t.dims.every((d, i) => Number.isSafeInteger(d) && BigInt(d) === dims[i])) return false;
		const size = t.dims.reduce((a, b) => a * b, 1);
		if (isDetached(t.data, size))
			throw argError(`input '${name}': the data's buffer is detached (transferred or freed since the tensor was made)`);
		if (t.data.length !== size * info.per || !(t.data instanceof info.array || t.type === 'uint8' && t.data instanceof Uint8ClampedArray))
			return false; // tensorIn reports it
		if (size > 0)
			rt.u8().set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), m._onnxrun_tensor_data(h));
		return true;
	}

	// A library tensor holding a copy of the JS tensor t (fed as input `name`).
	tensorIn(name, t) {
		const rt = this.rt, m = rt.m;
		const what = `input '${name}'`;
		if (!t || typeof t !== 'object' || typeof t.type !== 'string' || !Array.isArray(t.dims))
			throw argError(`${what}: not a Tensor`);
		const info = TYPES[t.type];
		if (!info) throw argError(`${what}: unsupported tensor type '${t.type}'`);
		const dims = [...t.dims], size = dims.reduce((a, b) => a * b, 1), data = t.data;
		if (t.type === 'string' ? !Array.isArray(data) : !(ArrayBuffer.isView(data)))
			throw argError(`${what}: no data`);
		if (t.type !== 'string' && !(data instanceof info.array || t.type === 'uint8' && data instanceof Uint8ClampedArray))
			throw argError(`${what}: a '${t.type}' tensor's data must be a ${info.array.name}, got ${data.constructor.name}`);
		if (t.type !== 'string' && isDetached(data, size))
			throw argError(`${what}: the data's buffer is detached (transferred or freed since the tensor was made)`);
		if (data.length !== size * info.per)
			throw argError(`${what}: dims [${dims}] hold ${size} elements, the data ${data.length / info.per}`);
		const pd = rt.malloc(8 * Math.max(dims.length, 1)), pt = rt.malloc(4);
		let h = 0;
		try {
			new BigInt64Array(rt.memory.buffer, pd, dims.length).set(dims.map(BigInt));
			const st = m._onnxrun_tensor_create(this.envP, info.code, dims.length, pd, pt);
			if (st) throw new OnnxrunError(rt.status(st), `${what}: ${rt.str(m._onnxrun_env_error(this.envP))}`);
			h = rt.u32()[pt >> 2];
		} finally {
			m._free(pd);
			m._free(pt);
		}
		try {
			if (t.type === 'string') {
				const enc = new TextEncoder();
				data.forEach((s, i) => {
					const b = enc.encode(String(s)), p = rt.malloc(b.length);
					rt.u8().set(b, p);
					const st = m._onnxrun_tensor_set_string(h, BigInt(i), p, b.length);
					m._free(p);
					if (st) throw new OnnxrunError(rt.status(st), `${what}: string ${i} not stored`);
				});
			} else if (size > 0) {
				const p = m._onnxrun_tensor_data(h);
				const src = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
				rt.u8().set(src, p);
			}
			return h;
		} catch (e) {
			m._onnxrun_tensor_free(h);
			throw e;
		}
	}

	// A Tensor copied out of a library tensor handle.
	tensorOut(h) {
		const rt = this.rt, m = rt.m;
		const type = TYPE_BY_CODE[m._onnxrun_tensor_dtype(h)];
		const rank = m._onnxrun_tensor_rank(h), pd = m._onnxrun_tensor_dims(h);
		const dims = Array.from(new BigInt64Array(rt.memory.buffer, pd, rank), Number);
		const size = dims.reduce((a, b) => a * b, 1), info = TYPES[type];
		const p = m._onnxrun_tensor_data(h);
		let data;
		if (type === 'string') {
			data = [];
			const dec = new TextDecoder(), u32 = rt.u32(), u8 = rt.u8();
			for (let i = 0; i < size; i++) {
				const sp = u32[(p >> 2) + 2 * i], n = u32[(p >> 2) + 2 * i + 1];
				data.push(dec.decode(u8.slice(sp, sp + n)));
			}
		} else {
			// In a disposed output's buffer when the session has one of that size (filled with
			// set(), not slice() of a view, which some engines run element by element); otherwise
			// a copy of the bytes made by ArrayBuffer.prototype.slice, which allocates without
			// zeroing first. The threads build's memory is a SharedArrayBuffer, whose slice() would
			// be shared too: there a new array is filled with set().
			const n = size * info.per, bytes = n * info.array.BYTES_PER_ELEMENT;
			const recycled = this.pool?.take(bytes), mem = rt.memory.buffer;
			if (recycled || size === 0 || !(mem instanceof ArrayBuffer)) {
				data = recycled ? new info.array(recycled) : new info.array(n);
				if (size > 0) new Uint8Array(data.buffer).set(new Uint8Array(mem, p, bytes));
			} else {
				data = new info.array(mem.slice(p, p + bytes));
			}
		}
		const t = new Tensor(type, data, dims);
		if (this.pool && type !== 'string') RECYCLE.set(t, this.pool);
		return t;
	}

	release() {
		if (!this.session) return;
		this.rt.call((m) => {
			m._onnxrun_session_free(this.session);
			for (const h of this.bound.values()) m._onnxrun_tensor_free(h);
			this.bound.clear();
			m._onnxrun_model_free(this.model);
			m._onnxrun_env_free(this.envP);
		});
		this.pool.clear();
		this.session = this.model = this.envP = 0;
	}
}

function checkOptions(o) {
	if (o === null || typeof o !== 'object') throw argError('InferenceSession.create: options must be an object');
	const eps = o.executionProviders;
	if (eps !== undefined) {
		const names = eps.map((e) => (typeof e === 'string' ? e : e?.name));
		if (!names.some((n) => n === 'wasm' || n === 'cpu'))
			throw new OnnxrunError('unsupported', `InferenceSession.create: onnxrun runs on WebAssembly only ('wasm'), not ${names.join(', ')}`);
	}
}

// Serialises the calls on one session: ONNX Runtime Web allows one run at a time per session
// too; here a second run waits for the first instead of failing.
function queue(self, fn) {
	const p = self._last.then(fn, fn);
	self._last = p.catch(() => {});
	return p;
}

export class InferenceSession {
	// InferenceSession.create(urlOrBytes, options) or (buffer, byteOffset, byteLength, options).
	static async create(src, a, b, c) {
		let options = a;
		if (typeof a === 'number') {
			src = new Uint8Array(toBytes(src)?.buffer ?? src, a, b);
			options = c;
		}
		options = options ?? {};
		const proxy = env.wasm.proxy && !platform.isNode && typeof Worker === 'function';
		const impl = proxy ? await (await import('./proxy.mjs')).ProxySession.create(src, options, env)
			: await LocalSession.create(src, options);
		return new InferenceSession(impl);
	}

	constructor(impl) {
		this._impl = impl;
		this._last = Promise.resolve();
		this.inputNames = impl.inputMetadata.map((i) => i.name);
		this.outputNames = impl.outputMetadata.map((i) => i.name);
		this.inputMetadata = impl.inputMetadata;
		this.outputMetadata = impl.outputMetadata;
	}

	// The build the session runs on and its threads: { build, threads, proxy }.
	get backend() { return { build: this._impl.build ?? this._impl.rt?.build, threads: this._impl.threads, proxy: !!this._impl.proxy }; }

	// run(feeds[, fetches][, options]): { outputName: Tensor } for every output (fetches, as
	// names or an object, select which are returned).
	run(feeds, fetches, _options) {
		return queue(this, async () => {
			const out = await this._impl.run(feeds);
			if (fetches === undefined || (!Array.isArray(fetches) && typeof fetches === 'object' && !Object.keys(fetches).length)) return out;
			const names = Array.isArray(fetches) ? fetches : Object.keys(fetches);
			const sel = {};
			for (const n of names) {
				if (!(n in out)) throw argError(`session.run: '${n}' is not an output of the model`);
				sel[n] = out[n];
			}
			return sel;
		});
	}

	release() { return queue(this, async () => this._impl.release()); }
	startProfiling() {}
	endProfiling() {}
}

// Decodes a serialized TensorProto (.pb bytes) into a Tensor (the conformance tests' files).
export async function decodeTensorProto(bytes) {
	const u8 = toBytes(bytes);
	if (!u8) throw argError('decodeTensorProto: expected bytes');
	const rt = await getRuntime();
	return rt.call((m) => {
		const slot = rt.malloc(4);
		let envP = 0, buf = 0, h = 0;
		try {
			let st = m._onnxrun_env_create(0, slot);
			if (st) throw new OnnxrunError(rt.status(st), 'cannot create an onnxrun env');
			envP = rt.u32()[slot >> 2];
			buf = rt.malloc(u8.length);
			rt.u8().set(u8, buf);
			st = m._onnxrun_tensor_decode_pb(envP, buf, u8.length, slot);
			if (st) throw new OnnxrunError(rt.status(st), rt.str(m._onnxrun_env_error(envP)));
			h = rt.u32()[slot >> 2];
			const t = LocalSession.prototype.tensorOut.call({ rt }, h);
			t.name = rt.str(m._onnxrun_tensor_name(h));
			return t;
		} finally {
			if (h) m._onnxrun_tensor_free(h);
			if (buf) m._free(buf);
			m._free(slot);
			if (envP) m._onnxrun_env_free(envP);
		}
	});
}

export { LocalSession as _LocalSession };
