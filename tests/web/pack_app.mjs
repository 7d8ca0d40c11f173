// pack_app.mjs - copied into the folder where tests/web/run.mjs installs the packed tarball:
// the installed package ('onnxrun' from node_modules) on the upsampler under node; prints
// "ok ..." when the output matches the expected one.
import { readFile } from 'node:fs/promises';
import { InferenceSession, decodeTensorProto } from 'onnxrun';

const pb = async (f) => decodeTensorProto(await readFile(f));
const session = await InferenceSession.create('upsampler/model.onnx');
const x = await pb('upsampler/test_data_set_0/input_0.pb');
const want = await pb('upsampler/test_data_set_0/output_0.pb');
const y = (await session.run({ image: x })).upscaled;
const bad = want.data.findIndex((w, i) => !(Math.abs(y.data[i] - w) <= 1e-7 + 1e-3 * Math.abs(w)));
console.log(bad < 0 && y.data.length === want.data.length ? `ok ${y.dims.join('x')} (${session.backend.build})` : `wrong at ${bad}`);
await session.release();
