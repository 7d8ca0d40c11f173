// Runs every case folder under the given root through ONNX Runtime (onnxruntime-node, CPU):
// reads ort_inputs.json (+ input_<i>.bin), writes ort.json (type, dims[, strings]) and ort_out.bin,
// or ort_error.txt with ORT's message, or ort_skip.txt when the JS API lacks an input's type.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array,
  uint64: BigUint64Array, bool: Uint8Array,
};

async function runCase(dir) {
  for (const f of ['ort.json', 'ort_out.bin', 'ort_error.txt', 'ort_skip.txt'])
    fs.rmSync(path.join(dir, f), { force: true });
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'ort_inputs.json'), 'utf8'));
  const feeds = {};
  for (const m of meta) {
    if (!m.type) {
      fs.writeFileSync(path.join(dir, 'ort_skip.txt'), `onnxruntime-node has no tensor type for input '${m.name}'`);
      return;
    }
    if (m.type === 'string') {
      feeds[m.name] = new ort.Tensor('string', m.strings, m.dims);
      continue;
    }
    const buf = fs.readFileSync(path.join(dir, m.file));
    const A = ARRAYS[m.type];
    const copy = new Uint8Array(buf.length);
    copy.set(buf);
    feeds[m.name] = new ort.Tensor(m.type, new A(copy.buffer, 0, buf.length / A.BYTES_PER_ELEMENT), m.dims);
  }
  try {
    const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), { logSeverityLevel: 4 });
    const out = (await session.run(feeds))[session.outputNames[0]];
    const info = { type: out.type, dims: out.dims };
    if (out.type === 'string') {
      info.strings = out.data;
    } else {
      const d = out.data;
      fs.writeFileSync(path.join(dir, 'ort_out.bin'), Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    }
    fs.writeFileSync(path.join(dir, 'ort.json'), JSON.stringify(info));
  } catch (e) {
    fs.writeFileSync(path.join(dir, 'ort_error.txt'), String(e && e.message ? e.message : e));
  }
}

(async () => {
  const root = process.argv[2];
  for (const name of fs.readdirSync(root).sort())
    if (fs.existsSync(path.join(root, name, 'ort_inputs.json')))
      await runCase(path.join(root, name));
})();
