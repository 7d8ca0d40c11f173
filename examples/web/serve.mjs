#!/usr/bin/env node
// serve.mjs - a tiny static file server for the demo page and the browser tests, on
// 127.0.0.1 only. It sends the two headers that make a page cross-origin isolated
// (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp), which
// browsers require before they give a page SharedArrayBuffer, and so the threads build.
//
//   node examples/web/serve.mjs [--root DIR] [--port N] [--no-isolation]
//
// --root: the folder served (default: the repository); --port: default 8080 (0 = any free
// port); --no-isolation: leave the two headers out (the page then gets the single-threaded
// builds). Only GET/HEAD of files under the root; no directory listings.
import http from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
	'.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css', '.png': 'image/png',
	'.svg': 'image/svg+xml', '.onnx': 'application/octet-stream', '.pb': 'application/octet-stream',
	'.bin': 'application/octet-stream', '.txt': 'text/plain; charset=utf-8' };

// Starts the server; resolves to { url, port, close() }.
export function startServer({ root, port = 8080, isolated = true } = {}) {
	root = path.resolve(root);
	const server = http.createServer((req, res) => {
		const headers = { 'Cache-Control': 'no-store', 'Cross-Origin-Resource-Policy': 'same-origin' };
		if (isolated) {
			headers['Cross-Origin-Opener-Policy'] = 'same-origin';
			headers['Cross-Origin-Embedder-Policy'] = 'require-corp';
		}
		const send = (code, text) => { res.writeHead(code, { ...headers, 'Content-Type': 'text/plain' }); res.end(text); };
		if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
		let rel;
		try {
			rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
		} catch {
			return send(400, 'bad path\n');
		}
		if (rel.endsWith('/')) rel += 'index.html';
		const file = path.join(root, rel);
		if (file !== root && !file.startsWith(root + path.sep)) return send(403, 'outside the root\n');
		let st;
		try {
			st = statSync(file);
		} catch {
			return send(404, 'not found\n');
		}
		if (!st.isFile()) return send(404, 'not a file\n');
		res.writeHead(200, { ...headers, 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream',
			'Content-Length': st.size });
		if (req.method === 'HEAD') return res.end();
		createReadStream(file).pipe(res);
	});
	return new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(port, '127.0.0.1', () => {
			const p = server.address().port;
			resolve({ url: `http://127.0.0.1:${p}/`, port: p, close: () => new Promise((r) => server.close(r)) });
		});
	});
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
	const opt = { root: path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..'), port: 8080, isolated: true };
	for (let i = 2; i < process.argv.length; i++) {
		const a = process.argv[i];
		if (a === '--root') opt.root = process.argv[++i];
		else if (a === '--port') opt.port = Number(process.argv[++i]);
		else if (a === '--no-isolation') opt.isolated = false;
		else { console.error(`serve.mjs: unknown option ${a}`); process.exit(2); }
	}
	const s = await startServer(opt);
	console.log(`serving ${path.resolve(opt.root)} at ${s.url}` + (opt.isolated ? ' (cross-origin isolated)' : ''));
	console.log(`demo: ${s.url}examples/web/`);
}
