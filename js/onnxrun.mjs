// onnxrun.mjs - a small JavaScript wrapper over the WebAssembly build of onnxrun (the module
// js/CMakeLists.txt builds: onnxrun_module.js + onnxrun_module.wasm).
//
//   import { Onnxrun } from './onnxrun.mjs';
//   const session = await Onnxrun.load(arrayBuffer);        // an .onnx file's bytes
//   const out = session.run({ image: float32Array }, { image: [1, 3, 32, 32] });
//   // out: { upscaled: { data: Float32Array, dims: [1, 3, 128, 128] } } (copies, caller's)
//   session.free();
//
// Float32 inputs and outputs only. One wasm instance serves every session (single-threaded:
// calls run one at a time, on the caller's thread). Errors are thrown as Error objects whose
// message is the library's (it names the node or input at fault); `status` holds the
// library's status string (onnxrun_status_str: 'invalid input', 'invalid model', ...).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const DTYPE_FLOAT = 1;

let modulePromise = null;

// The emscripten module (created once). Under node the .wasm is read here and handed over,
// so the module never asks node's URL API for it (which refuses a file path). `dir` is the folder holding onnxrun_module.js
// (default: $ONNXRUN_JS_MODULE_DIR, else build-wasm/js next to this file's folder).
function instance(dir) {
	if (!modulePromise) {
		const here = path.dirname(fileURLToPath(import.meta.url));
		const d = path.resolve(dir || process.env.ONNXRUN_JS_MODULE_DIR || path.join(here, '..', 'build-wasm', 'js'));
		const create = createRequire(import.meta.url)(path.join(d, 'onnxrun_module.js'));
		modulePromise = create({ wasmBinary: readFileSync(path.join(d, 'onnxrun_module.wasm')) });
	}
	return modulePromise;
}

class OnnxrunError extends Error {
	constructor(status, message) {
		super(message);
		this.name = 'OnnxrunError';
		this.status = status;
	}
}

// Scratch memory for out-parameters and strings, freed by the caller.
function cstring(m, s) {
	const n = m.lengthBytesUTF8(s) + 1, p = m._malloc(n);
	m.stringToUTF8(s, p, n);
	return p;
}

// A copy of n floats of the wasm heap from float index p: a new array filled by set(), not
// HEAPF32.slice(), which node 20 runs element by element on a wasm memory (4 MiB: ~25 ms
// against well under 1 ms).
function copyF32(m, p, n) {
	const data = new Float32Array(n);
	data.set(m.HEAPF32.subarray(p, p + n));
	return data;
}

function check(m, st, what) {
	if (st !== 0)
		throw new OnnxrunError(m.UTF8ToString(m._onnxrun_status_str(st)), what());
}

class Session {
	constructor(m, env, model, session, layout) {
		this.m = m;
		this.env = env;
		this.model = model;
		this.session = session;
		this.L = layout;
		this.inputs = []; // tensors bound by the last run, freed by the next run or free()
		const names = (count, info) => {
			const out = [], p = m._malloc(layout.infoSize);
			for (let i = 0; i < count; i++) {
				check(m, info(model, i, p), () => 'input/output info');
				out.push(m.UTF8ToString(m.HEAP32[(p + layout.infoName) >> 2]));
			}
			m._free(p);
			return out;
		};
		this.inputNames = names(m._onnxrun_model_input_count(model), m._onnxrun_model_input_info);
		this.outputNames = names(m._onnxrun_model_output_count(model), m._onnxrun_model_output_info);
	}

	// Runs the model. inputs: { name: Float32Array }; dims: { name: [d0, d1, ...] } (every
	// input needs its dims). Returns { outputName: { data: Float32Array, dims: number[] } },
	// copies owned by the caller. Throws OnnxrunError (bad input, failed run).
	run(inputs, dims) {
		const m = this.m;
		if (!this.session)
			throw new OnnxrunError('invalid argument', 'session was freed');
		this.freeInputs();
		for (const [name, data] of Object.entries(inputs)) {
			if (!(data instanceof Float32Array))
				throw new OnnxrunError('invalid argument', `input '${name}': not a Float32Array`);
			const shape = dims && dims[name];
			if (!Array.isArray(shape))
				throw new OnnxrunError('invalid argument', `input '${name}': no dims given`);
			const count = shape.reduce((a, b) => a * b, 1);
			if (count !== data.length)
				throw new OnnxrunError('invalid argument',
					`input '${name}': dims [${shape}] hold ${count} elements, the array ${data.length}`);
			const pd = m._malloc(8 * Math.max(shape.length, 1)), pt = m._malloc(4);
			for (let i = 0; i < shape.length; i++) {
				m.HEAP32[(pd >> 2) + 2 * i] = shape[i];
				m.HEAP32[(pd >> 2) + 2 * i + 1] = 0;
			}
			const st = m._onnxrun_tensor_create(this.env, DTYPE_FLOAT, shape.length, pd, pt);
			const t = m.HEAP32[pt >> 2];
			m._free(pd);
			m._free(pt);
			check(m, st, () => `input '${name}': ${m.UTF8ToString(m._onnxrun_env_error(this.env))}`);
			this.inputs.push(t);
			m.HEAPF32.set(data, m._onnxrun_tensor_data(t) >> 2);
			const pn = cstring(m, name);
			const st2 = m._onnxrun_session_set_input_by_name(this.session, pn, t);
			m._free(pn);
			check(m, st2, () => m.UTF8ToString(m._onnxrun_session_error(this.session)));
		}
		check(m, m._onnxrun_session_run(this.session), () => m.UTF8ToString(m._onnxrun_session_error(this.session)));
		const out = {}, po = m._malloc(4);
		try {
			for (let i = 0; i < this.outputNames.length; i++) {
				check(m, m._onnxrun_session_output(this.session, i, po),
					() => m.UTF8ToString(m._onnxrun_session_error(this.session)));
				const t = m.HEAP32[po >> 2];
				const name = this.outputNames[i];
				if (m._onnxrun_tensor_dtype(t) !== DTYPE_FLOAT)
					throw new OnnxrunError('unsupported', `output '${name}': not float32`);
				const rank = m._onnxrun_tensor_rank(t), pd = m._onnxrun_tensor_dims(t), shape = [];
				for (let d = 0; d < rank; d++)
					shape.push(m.HEAP32[(pd >> 2) + 2 * d]); // int64, little-endian, < 2^31
				const n = shape.reduce((a, b) => a * b, 1), p = m._onnxrun_tensor_data(t) >> 2;
				out[name] = { data: copyF32(m, p, n), dims: shape };
			}
		} finally {
			m._free(po);
		}
		return out;
	}

	freeInputs() {
		for (const t of this.inputs)
			this.m._onnxrun_tensor_free(t);
		this.inputs = [];
	}

	// Frees the session, its model and env. Idempotent.
	free() {
		const m = this.m;
		if (!this.session)
			return;
		m._onnxrun_session_free(this.session);
		this.freeInputs();
		m._onnxrun_model_free(this.model);
		m._onnxrun_env_free(this.env);
		this.session = this.model = this.env = 0;
	}
}

export const Onnxrun = {
	// Loads a model from its bytes (ArrayBuffer or typed array) and makes a session.
	// options.moduleDir: folder of onnxrun_module.js (first call only). Throws OnnxrunError.
	async load(bytes, options = {}) {
		const m = await instance(options.moduleDir);
		const layout = {
			infoSize: m._onnxrun_js_layout(0),
			infoName: m._onnxrun_js_layout(1),
		};
		const u8 = bytes instanceof ArrayBuffer ? new Uint8Array(bytes)
			: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
		const slot = m._malloc(4);
		let env = 0, model = 0, session = 0, buf = 0;
		try {
			check(m, m._onnxrun_env_create(0, slot), () => 'cannot create an onnxrun env');
			env = m.HEAP32[slot >> 2];
			buf = m._malloc(Math.max(u8.length, 1));
			m.HEAPU8.set(u8, buf);
			check(m, m._onnxrun_model_load_buffer(env, buf, u8.length, 0, slot),
				() => m.UTF8ToString(m._onnxrun_env_error(env)));
			model = m.HEAP32[slot >> 2];
			check(m, m._onnxrun_session_create(model, slot), () => m.UTF8ToString(m._onnxrun_env_error(env)));
			session = m.HEAP32[slot >> 2];
			const s = new Session(m, env, model, session, layout);
			env = model = session = 0;
			return s;
		} finally {
			m._free(buf);
			m._free(slot);
			if (session) m._onnxrun_session_free(session);
			if (model) m._onnxrun_model_free(model);
			if (env) m._onnxrun_env_free(env);
		}
	},

	// Decodes a TensorProto (.pb bytes) into { data: Float32Array, dims } (float32 only).
	async decodeTensor(bytes, options = {}) {
		const m = await instance(options.moduleDir);
		const u8 = bytes instanceof ArrayBuffer ? new Uint8Array(bytes)
			: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
		const slot = m._malloc(4);
		let env = 0, buf = 0, t = 0;
		try {
			check(m, m._onnxrun_env_create(0, slot), () => 'cannot create an onnxrun env');
			env = m.HEAP32[slot >> 2];
			buf = m._malloc(Math.max(u8.length, 1));
			m.HEAPU8.set(u8, buf);
			check(m, m._onnxrun_tensor_decode_pb(env, buf, u8.length, slot),
				() => m.UTF8ToString(m._onnxrun_env_error(env)));
			t = m.HEAP32[slot >> 2];
			if (m._onnxrun_tensor_dtype(t) !== DTYPE_FLOAT)
				throw new OnnxrunError('unsupported', 'tensor is not float32');
			const rank = m._onnxrun_tensor_rank(t), pd = m._onnxrun_tensor_dims(t), dims = [];
			for (let d = 0; d < rank; d++)
				dims.push(m.HEAP32[(pd >> 2) + 2 * d]);
			const n = dims.reduce((a, b) => a * b, 1), p = m._onnxrun_tensor_data(t) >> 2;
			return { data: copyF32(m, p, n), dims };
		} finally {
			if (t) m._onnxrun_tensor_free(t);
			m._free(buf);
			m._free(slot);
			if (env) m._onnxrun_env_free(env);
		}
	},
};

export { OnnxrunError };
