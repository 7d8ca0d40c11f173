// ort_example.mjs - code written for onnxruntime-web, as its documentation shows it. The two
// pages ort_example_onnxruntime.html and ort_example_onnxrun.html map the one import below to
// onnxruntime-web or to onnxrun (an import map: nothing else changes); tests/web/run.mjs
// runs both on the example models and checks both against the expected outputs.
import * as ort from 'onnxruntime-web';

// inputs: [{ type, data, dims }] in the order of session.inputNames.
export async function runExample(modelUrl, inputs) {
	ort.env.wasm.numThreads = 1;
	const session = await ort.InferenceSession.create(modelUrl, {
		executionProviders: ['wasm'],
		graphOptimizationLevel: 'all',
	});
	const feeds = {};
	session.inputNames.forEach((name, i) => {
		feeds[name] = new ort.Tensor(inputs[i].type, inputs[i].data, inputs[i].dims);
	});
	const results = await session.run(feeds);
	const out = session.outputNames.map((name) => {
		const t = results[name];
		return { name, type: t.type, dims: t.dims, data: t.data };
	});
	await session.release();
	return out;
}
