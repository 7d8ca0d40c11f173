// test.mjs - the npm package (js/) under node (run by .ci/wasm.sh and .ci/web.sh): the bundled
// upsampler model on its test data (expected output computed independently by
// models/make_models.py), a run of the same session with other inputs, an int64 model
// compared exactly, and the errors the package must report.
// Usage: node js/test.mjs [BUILD_DIR]   (folder of onnxrun-simd.{mjs,wasm}; default js/dist)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InferenceSession, Tensor, env, decodeTensorProto } from './node.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
if (process.argv[2]) env.wasm.wasmPaths = process.argv[2];
const model = path.join(root, 'models', 'upsampler');
let checks = 0;

// |got - want| <= atol + rtol * |want|, as the CLI compares (rtol 1e-3, atol 1e-7)
function expectClose(got, want, what) {
	assert.deepEqual(got.dims, want.dims, `${what}: dims`);
	assert.equal(got.type, want.type);
	assert.equal(got.data.length, want.data.length);
	for (let i = 0; i < want.data.length; i++) {
		const err = Math.abs(got.data[i] - want.data[i]);
		if (!(err <= 1e-7 + 1e-3 * Math.abs(want.data[i])))
			assert.fail(`${what}: element ${i}: got ${got.data[i]}, want ${want.data[i]}`);
	}
	checks++;
}
const pb = (f) => decodeTensorProto(readFileSync(f));

// A path (node), bytes: both load.
const session = await InferenceSession.create(path.join(model, 'model.onnx'));
assert.deepEqual(session.inputNames, ['image']);
assert.deepEqual(session.outputNames, ['upscaled']);
assert.deepEqual(session.inputMetadata[0], { name: 'image', type: 'float32', shape: [1, 3, 32, 32], isTensor: true });
assert.deepEqual(session.outputMetadata[0].shape, [1, 3, 128, 128]);
assert.equal(env.wasm.build, 'simd'); // node 20 has no relaxed SIMD by default; no threads in node
checks++;

const x = await pb(path.join(model, 'test_data_set_0', 'input_0.pb'));
const want = await pb(path.join(model, 'test_data_set_0', 'output_0.pb'));
assert.deepEqual(x.dims, [1, 3, 32, 32]);
const out = await session.run({ image: x });
expectClose(out.upscaled, want, 'upsampler test_data_set_0');

// The same session with another input gives another output (nothing stale), and the first
// input again gives the same bits.
const zerosIn = () => new Tensor('float32', new Float32Array(3 * 32 * 32), [1, 3, 32, 32]);
const zeros = await session.run({ image: zerosIn() });
assert.notDeepEqual(Array.from(zeros.upscaled.data.slice(0, 64)), Array.from(out.upscaled.data.slice(0, 64)));
const again = await session.run({ image: x });
assert.deepEqual(again.upscaled.data, out.upscaled.data);
checks += 2;

// Outputs are the caller's: a kept output keeps its values across later runs; a disposed
// one hands its buffer to the next run of that size (refilled, right values) and is empty.
{
	const kept = (await session.run({ image: x })).upscaled;
	const other = (await session.run({ image: zerosIn() })).upscaled;
	assert.deepEqual(kept.data, out.upscaled.data);
	const buf = other.data.buffer;
	other.dispose();
	assert.equal(other.data.length, 0);
	const next = (await session.run({ image: x })).upscaled;
	assert.equal(next.data.buffer, buf, 'the disposed output buffer is refilled');
	expectClose(next, want, 'upsampler into a recycled buffer');
	next.dispose();
	next.dispose(); // twice: no second hand-back
	const a1 = (await session.run({ image: x })).upscaled, a2 = (await session.run({ image: x })).upscaled;
	assert.notEqual(a1.data.buffer, a2.data.buffer, 'one disposed buffer serves one run');
	checks++;
}

// int64 through BigInt64Array, compared exactly (values beyond 2^53).
{
	const dir = path.join(root, 'models', 'd2s_dcr_int64');
	const s = await InferenceSession.create(readFileSync(path.join(dir, 'model.onnx')));
	const xi = await pb(path.join(dir, 'test_data_set_0', 'input_0.pb'));
	const yi = await pb(path.join(dir, 'test_data_set_0', 'output_0.pb'));
	assert.equal(xi.type, 'int64');
	assert.ok(xi.data instanceof BigInt64Array);
	const r = await s.run({ x: xi });
	assert.deepEqual(r.y.dims, yi.dims);
	assert.deepEqual(r.y.data, yi.data);
	await s.release();
	checks++;
}

// Errors: a wrong shape names the input; a wrong length, a missing feed and a wrong array
// type are refused before reaching the library; a broken model is reported.
await assert.rejects(session.run({ image: new Tensor('float32', new Float32Array(3 * 16 * 16), [1, 3, 16, 16]) }),
	(e) => e instanceof Error && e.status === 'invalid input' && /image/.test(e.message));
assert.throws(() => new Tensor('float32', new Float32Array(5), [1, 3, 32, 32]), /hold 3072 elements/);
await assert.rejects(session.run({}), /input 'image' is missing/);
assert.throws(() => new Tensor('float32', new Int32Array(3), [3]), /must be a Float32Array/);
await assert.rejects(session.run({ image: new Tensor('int32', new Int32Array(3072), [1, 3, 32, 32]) }),
	(e) => e.status === 'invalid input' && /expected dtype float, got int32/.test(e.message));
await assert.rejects(InferenceSession.create(new Uint8Array([1, 2, 3, 4])),
	(e) => e instanceof Error && e.status === 'invalid model' && e.message.length > 0);
checks += 6;

await session.release();
await session.release();
await assert.rejects(session.run({ image: x }), /released/);
checks++;
console.log(`js test: ${checks} checks passed (build ${env.wasm.build})`);
