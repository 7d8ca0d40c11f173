#!/usr/bin/env node
// make_sample_image.mjs - writes sample.png, the demo's bundled 32x32 image: a colour wheel on
// a gradient with a dark ring, drawn from formulas (nothing copied), encoded as an 8-bit RGB
// PNG with node's zlib. Run: node examples/web/make_sample_image.mjs
import { deflateSync, crc32 } from 'node:zlib';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const W = 32, H = 32;
const raw = Buffer.alloc(H * (1 + 3 * W));
for (let y = 0; y < H; y++) {
	raw[y * (1 + 3 * W)] = 0; // filter: none
	for (let x = 0; x < W; x++) {
		const dx = x - 15.5, dy = y - 15.5, r = Math.hypot(dx, dy), a = Math.atan2(dy, dx);
		let rgb = [40 + 5 * y, 60 + 3 * x, 120 + 2 * (x + y)];
		if (r < 12) rgb = [0, 2, 4].map((k) => 128 + 127 * Math.cos(a + (k * Math.PI) / 3));
		if (r >= 9 && r < 10.5) rgb = [20, 20, 30];
		rgb.forEach((v, c) => { raw[y * (1 + 3 * W) + 1 + 3 * x + c] = Math.max(0, Math.min(255, Math.round(v))); });
	}
}
const chunk = (type, data) => {
	const len = Buffer.alloc(4), crc = Buffer.alloc(4), td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
	len.writeUInt32BE(data.length);
	crc.writeUInt32BE(crc32(td));
	return Buffer.concat([len, td, crc]);
};
const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(W, 0);
ihdr.writeUInt32BE(H, 4);
ihdr[8] = 8; ihdr[9] = 2; // 8-bit RGB
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr),
	chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
writeFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'sample.png'), png);
