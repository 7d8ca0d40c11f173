// proxy.mjs - env.wasm.proxy: sessions living in one dedicated module Web Worker
// (js/worker.mjs), so runs never block the page's thread. Requests and replies are messages;
// input data is copied (structured clone), outputs come back as transferred buffers.
import { OnnxrunError, Tensor } from './onnxrun.mjs';

let worker = null;
let nextId = 1;
const pending = new Map(); // id -> { resolve, reject }

function failAll(msg) {
	for (const p of pending.values()) p.reject(new OnnxrunError('runtime', msg));
	pending.clear();
	worker = null;
}

function call(msg, transfer = []) {
	if (!worker) {
		worker = new Worker(new URL('./worker.mjs', import.meta.url), { type: 'module', name: 'onnxrun' });
		worker.onmessage = ({ data }) => {
			const p = pending.get(data.id);
			if (!p) return;
			pending.delete(data.id);
			if (data.ok) p.resolve(data.result);
			else p.reject(Object.assign(new OnnxrunError(data.error.status, data.error.message),
				data.error.name === 'TypeError' || data.error.name === 'RangeError' ? { name: data.error.name } : {}));
		};
		worker.onerror = (e) => { e.preventDefault?.(); failAll(`onnxrun's worker failed: ${e.message || 'could not start'}`); };
		worker.onmessageerror = () => failAll("onnxrun's worker sent a message that could not be read");
	}
	const id = nextId++;
	return new Promise((resolve, reject) => {
		pending.set(id, { resolve, reject });
		try {
			worker.postMessage({ id, ...msg }, transfer);
		} catch (e) {
			pending.delete(id);
			reject(new OnnxrunError('invalid argument', `cannot send to onnxrun's worker: ${e.message}`));
		}
	});
}

function absolute(u) {
	return u === undefined ? undefined : new URL(String(u), globalThis.location?.href).href;
}

export class ProxySession {
	static async create(src, options, env) {
		let model = src;
		if (typeof src === 'string' || src instanceof URL) model = absolute(src);
		else if (ArrayBuffer.isView(src)) model = src.slice ? new Uint8Array(src.buffer, src.byteOffset, src.byteLength).slice() : src;
		else if (src instanceof ArrayBuffer) model = src.slice(0);
		const settings = {
			numThreads: env.wasm.numThreads, relaxedSimd: env.wasm.relaxedSimd, forceBuild: env.wasm.forceBuild,
			wasmPaths: absolute(env.wasm.wasmPaths ?? new URL('./dist/', import.meta.url)), logLevel: env.logLevel,
		};
		const { executionProviders, intraOpNumThreads } = options;
		const r = await call({ op: 'create', model, options: { executionProviders, intraOpNumThreads }, settings });
		return new ProxySession(r);
	}

	constructor(r) {
		Object.assign(this, r);
		this.proxy = true;
	}

	async run(feeds) {
		if (this.sid === 0) throw new OnnxrunError('invalid argument', 'session.run: the session was released');
		if (!feeds || typeof feeds !== 'object') throw new OnnxrunError('invalid argument', 'session.run: feeds must be an object { inputName: Tensor }');
		const plain = {};
		for (const [name, t] of Object.entries(feeds)) {
			if (!t || typeof t !== 'object') throw new OnnxrunError('invalid argument', `input '${name}': not a Tensor`);
			const d = t.data;
			if (ArrayBuffer.isView(d) && t.size > 0 && (d.buffer.detached === true || d.byteLength === 0))
				throw new OnnxrunError('invalid argument', `input '${name}': the data's buffer is detached (transferred or freed since the tensor was made)`);
			plain[name] = { type: t.type, data: d, dims: t.dims && [...t.dims] };
		}
		const r = await call({ op: 'run', sid: this.sid, feeds: plain });
		const out = {};
		for (const [name, t] of Object.entries(r)) out[name] = new Tensor(t.type, t.data, t.dims);
		return out;
	}

	async release() {
		if (this.sid === 0) return;
		const sid = this.sid;
		this.sid = 0;
		await call({ op: 'release', sid });
	}
}
