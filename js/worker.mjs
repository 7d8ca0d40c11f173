// worker.mjs - the module Web Worker behind env.wasm.proxy (js/proxy.mjs): holds the
// sessions, runs them on its own thread (with the threads build's pool when the page is
// cross-origin isolated) and answers each request with its result or error.
import { env, _LocalSession as LocalSession } from './onnxrun.mjs';

const sessions = new Map();
let nextSid = 1;

function transferables(out) {
	return Object.values(out).map((t) => t.data?.buffer).filter((b) => b instanceof ArrayBuffer);
}

self.onmessage = async ({ data: msg }) => {
	const { id } = msg;
	try {
		let result, transfer = [];
		if (msg.op === 'create') {
			const s = msg.settings;
			if (!env.wasm.build) Object.assign(env.wasm, { numThreads: s.numThreads, relaxedSimd: s.relaxedSimd, forceBuild: s.forceBuild, wasmPaths: s.wasmPaths });
			env.logLevel = s.logLevel;
			const session = await LocalSession.create(msg.model, msg.options);
			const sid = nextSid++;
			sessions.set(sid, session);
			result = { sid, inputMetadata: session.inputMetadata, outputMetadata: session.outputMetadata,
				build: session.rt.build, threads: session.threads };
		} else {
			const session = sessions.get(msg.sid);
			if (!session) throw Object.assign(new Error('the session was released'), { status: 'invalid argument' });
			if (msg.op === 'run') {
				const out = session.run(msg.feeds);
				result = {};
				for (const [k, t] of Object.entries(out)) result[k] = { type: t.type, data: t.data, dims: [...t.dims] };
				transfer = transferables(result);
			} else if (msg.op === 'release') {
				session.release();
				sessions.delete(msg.sid);
				result = true;
			} else {
				throw new Error(`unknown request '${msg.op}'`);
			}
		}
		self.postMessage({ id, ok: true, result }, transfer);
	} catch (e) {
		self.postMessage({ id, ok: false, error: { name: e?.name, status: e?.status ?? 'runtime', message: String(e?.message ?? e) } });
	}
};
