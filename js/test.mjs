// test.mjs - the JavaScript wrapper under node (run by .ci/wasm.sh): the bundled upsampler
// model on its test data (expected output computed independently by models/make_models.py),
// a run of the same session with other inputs, and the errors the wrapper must report.
// Usage: node js/test.mjs [MODULE_DIR]
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Onnxrun } from './onnxrun.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const moduleDir = process.argv[2];
const opts = moduleDir ? { moduleDir } : {};
const model = path.join(root, 'models', 'upsampler');
let checks = 0;

// |got - want| <= atol + rtol * |want|, as the CLI compares (rtol 1e-3, atol 1e-7)
function expectClose(got, want, what) {
	assert.deepEqual(got.dims, want.dims, `${what}: dims`);
	assert.equal(got.data.length, want.data.length);
	for (let i = 0; i < want.data.length; i++) {
		const err = Math.abs(got.data[i] - want.data[i]);
		if (!(err <= 1e-7 + 1e-3 * Math.abs(want.data[i])))
			assert.fail(`${what}: element ${i}: got ${got.data[i]}, want ${want.data[i]}`);
	}
	checks++;
}

const bytes = readFileSync(path.join(model, 'model.onnx'));
const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const session = await Onnxrun.load(ab, opts);
assert.deepEqual(session.inputNames, ['image']);
assert.deepEqual(session.outputNames, ['upscaled']);
checks++;

const x = await Onnxrun.decodeTensor(readFileSync(path.join(model, 'test_data_set_0', 'input_0.pb')), opts);
const want = await Onnxrun.decodeTensor(readFileSync(path.join(model, 'test_data_set_0', 'output_0.pb')), opts);
assert.deepEqual(x.dims, [1, 3, 32, 32]);
const out = session.run({ image: x.data }, { image: x.dims });
expectClose(out.upscaled, want, 'upsampler test_data_set_0');

// The same session with another input gives another output (nothing stale), and the first
// input again gives the same bits.
const zeros = session.run({ image: new Float32Array(3 * 32 * 32) }, { image: [1, 3, 32, 32] });
assert.notDeepEqual(Array.from(zeros.upscaled.data.slice(0, 64)), Array.from(out.upscaled.data.slice(0, 64)));
const again = session.run({ image: x.data }, { image: x.dims });
assert.deepEqual(again.upscaled.data, out.upscaled.data);
checks += 2;

// Errors: a wrong shape names the input; a wrong length, a missing dims entry and a
// non-Float32Array are refused before reaching the library; a broken model is reported.
assert.throws(() => session.run({ image: new Float32Array(3 * 16 * 16) }, { image: [1, 3, 16, 16] }),
	(e) => e.status === 'invalid input' && /image/.test(e.message));
assert.throws(() => session.run({ image: new Float32Array(5) }, { image: [1, 3, 32, 32] }), /hold 3072 elements/);
assert.throws(() => session.run({ image: x.data }, {}), /no dims/);
assert.throws(() => session.run({ image: [1, 2, 3] }, { image: [3] }), /not a Float32Array/);
await assert.rejects(Onnxrun.load(new Uint8Array([1, 2, 3, 4]), opts),
	(e) => e.status === 'invalid model' && e.message.length > 0);
checks += 5;

session.free();
session.free();
assert.throws(() => session.run({ image: x.data }, { image: x.dims }), /freed/);
checks++;
console.log(`js test: ${checks} checks passed`);
