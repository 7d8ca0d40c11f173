// types_check.ts - compiled with `tsc --noEmit` (tests/web/run.mjs, "types"): code written
// against the package's declarations (js/onnxrun.d.ts) the way onnxruntime-web is used, so a
// declaration that does not match the API shape fails to compile. Never run.
import * as ort from 'onnxrun';

async function example(url: string, bytes: Uint8Array): Promise<number> {
	ort.env.wasm.numThreads = 2;
	ort.env.wasm.proxy = true;
	ort.env.wasm.wasmPaths = '/dist/';
	const session: ort.InferenceSession = await ort.InferenceSession.create(url, { executionProviders: ['wasm'] });
	const other = await ort.InferenceSession.create(bytes.buffer as ArrayBuffer, { intraOpNumThreads: 1 });
	const names: readonly string[] = session.inputNames;
	const shape = session.inputMetadata[0].shape;
	const t = new ort.Tensor('float32', new Float32Array(12), [1, 3, 2, 2]);
	const i64 = new ort.Tensor('int64', new BigInt64Array(2), [2]);
	const half = new ort.Tensor('float16', new Uint16Array(2), [2]);
	const s = new ort.Tensor('string', ['a', 'b'], [2]);
	const b = new ort.Tensor('bool', new Uint8Array(1), [1]);
	const inferred = new ort.Tensor(new Float64Array(4), [2, 2]);
	const out: ort.InferenceSession.ReturnType = await session.run({ [names[0]]: t });
	const y = out[session.outputNames[0]];
	const data = y.data as Float32Array;
	const dims: readonly number[] = y.dims;
	const build: 'simd' | 'relaxed' | 'threads' | 'relaxed-threads' | undefined = ort.env.wasm.build;
	try {
		await other.run({ x: i64, h: half, s, b, inferred });
	} catch (e) {
		if (e instanceof ort.OnnxrunError) console.log(e.status, e.message);
	}
	await session.release();
	await other.release();
	return data.length + dims.length + (shape?.length ?? 0) + (build ? 1 : 0);
}
void example;
