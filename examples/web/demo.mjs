// demo.mjs - the demo page (examples/web/index.html): the package (js/onnxrun.mjs) runs the
// bundled upsampler on an image. Served by examples/web/serve.mjs (cross-origin isolated, so
// the threads build can run). window.demo exposes the last input and output for the browser
// test (tests/web/run.mjs, "demo"), which compares the pixels with the CLI's output.
import * as ort from '../../js/onnxrun.mjs';

const params = new URLSearchParams(location.search);
ort.env.wasm.proxy = params.get('proxy') !== '0';
if (params.get('threads')) ort.env.wasm.numThreads = Number(params.get('threads'));

const status = document.querySelector('#status');
const demo = window.demo = { done: false };
const RUNS = 5;

// RGBA pixels (32x32) -> float32 [1, 3, 32, 32] in [0, 1]
function toTensor(rgba) {
	const hw = 32 * 32, x = new Float32Array(3 * hw);
	for (let i = 0; i < hw; i++)
		for (let c = 0; c < 3; c++) x[c * hw + i] = rgba[i * 4 + c] / 255;
	return new ort.Tensor('float32', x, [1, 3, 32, 32]);
}

// float32 [1, 3, H, W] -> RGBA pixels, contrast-stretched: the output's smallest value to 0,
// its largest to 255, rounded (the untrained model's outputs are small, so unstretched they
// would be almost black). tests/web/run.mjs maps the CLI's output the same way.
function toPixels(t) {
	const [, , h, w] = t.dims, hw = h * w, px = new Uint8ClampedArray(4 * hw);
	let lo = Infinity, hi = -Infinity;
	for (const v of t.data) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
	const scale = hi > lo ? 255 / (hi - lo) : 0;
	for (let i = 0; i < hw; i++) {
		for (let c = 0; c < 3; c++) px[i * 4 + c] = Math.round((t.data[c * hw + i] - lo) * scale);
		px[i * 4 + 3] = 255;
	}
	return px;
}

let session;
async function upscale(image) {
	const cin = document.querySelector('#in').getContext('2d', { willReadFrequently: true });
	cin.clearRect(0, 0, 32, 32);
	cin.drawImage(image, 0, 0, 32, 32);
	const x = toTensor(cin.getImageData(0, 0, 32, 32).data);
	session ??= await ort.InferenceSession.create(new URL('../../models/upsampler/model.onnx', import.meta.url).href);
	const times = [];
	let y;
	for (let r = 0; r < RUNS; r++) {
		const t0 = performance.now();
		y = (await session.run({ image: x })).upscaled;
		times.push(performance.now() - t0);
	}
	times.sort((a, b) => a - b);
	const px = toPixels(y);
	document.querySelector('#out').getContext('2d').putImageData(new ImageData(px, 128, 128), 0, 0);
	const b = session.backend;
	status.textContent = `${times[RUNS >> 1].toFixed(2)} ms per run (median of ${RUNS}); build: ${b.build}` +
		` (${b.build.startsWith('relaxed') ? 'relaxed SIMD' : 'SIMD128'}, ${b.threads} thread${b.threads > 1 ? 's' : ''})` +
		`${b.proxy ? ', in a Web Worker' : ', on the page\'s thread'}; crossOriginIsolated: ${globalThis.crossOriginIsolated === true}`;
	Object.assign(demo, { input: x.data, outputPixels: px, outputDims: [...y.dims], backend: b, msPerRun: times[RUNS >> 1] });
}

async function fromUrl(url) {
	const img = new Image();
	img.src = url;
	await img.decode();
	return img;
}

async function go(imagePromise) {
	try {
		demo.done = false;
		await upscale(await imagePromise);
	} catch (e) {
		demo.error = e.message;
		status.textContent = `error: ${e.message}`;
		status.className = 'error';
	}
	demo.done = true;
}

document.querySelector('#file').addEventListener('change', (ev) => {
	const f = ev.target.files[0];
	if (f) go(createImageBitmap(f));
});
go(fromUrl(new URL('sample.png', import.meta.url).href));
