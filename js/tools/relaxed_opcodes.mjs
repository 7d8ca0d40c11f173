#!/usr/bin/env node
// relaxed_opcodes.mjs FILE.wasm - rewrites the relaxed SIMD fused multiply-add of the
// onnxrun-relaxed build to the opcode engines implement.
//
// Debian 12's clang 14 (emscripten 3.1.6) compiles __builtin_wasm_fma_f32x4 with -mrelaxed-simd
// to the relaxed SIMD proposal's early encoding, 0xfd 0xaf 0x01 ("f32x4.relaxed_fma"). The
// proposal later renumbered it: f32x4.relaxed_madd is 0xfd 0x105 (LEB128: 0x85 0x02), the
// only form V8 (Chromium >= 114) accepts, computing a * b + c of the operands in stack order.
// Both encodings are three bytes, so the rewrite keeps every offset. To be sure no immediate
// that happens to hold those bytes is changed, the number of matches in the code section must
// equal the number of relaxed_fma instructions binaryen's disassembler (wasm-dis, Debian's
// binaryen, which emscripten depends on) finds, and the module must hold no other relaxed
// instruction (whose early opcodes would be wrong as well). Any mismatch fails the build.
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const file = process.argv[2];
if (!file) throw new Error('usage: relaxed_opcodes.mjs FILE.wasm');
const bytes = readFileSync(file);
const fail = (msg) => { console.error(`relaxed_opcodes: ${file}: ${msg}`); process.exit(1); };

function leb(pos) {
	let v = 0, shift = 0, b;
	do { b = bytes[pos++]; v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
	return [v, pos];
}

if (bytes.readUInt32LE(0) !== 0x6d736100) fail('not a wasm module');
let pos = 8, code = null;
while (pos < bytes.length) {
	const id = bytes[pos];
	const [size, start] = leb(pos + 1);
	if (id === 10) code = [start, start + size];
	pos = start + size;
}
if (!code) fail('no code section');

const OLD = [0xfd, 0xaf, 0x01], NEW = [0xfd, 0x85, 0x02];
const at = [];
for (let i = code[0]; i + 2 < code[1]; i++)
	if (bytes[i] === OLD[0] && bytes[i + 1] === OLD[1] && bytes[i + 2] === OLD[2]) at.push(i);

const text = execFileSync('wasm-dis', [file], { maxBuffer: 1 << 30 }).toString();
const relaxed = text.match(/\b[a-z0-9]+x[0-9]+\.relaxed_[a-z_0-9]+/g) || [];
const fma = relaxed.filter((r) => r === 'f32x4.relaxed_fma').length;
if (relaxed.length !== fma)
	fail(`other relaxed instructions than f32x4.relaxed_fma: ${[...new Set(relaxed)].join(', ')}`);
if (fma === 0) fail('no f32x4.relaxed_fma: the relaxed kernels were not compiled');
if (at.length !== fma) fail(`${at.length} byte matches for ${fma} f32x4.relaxed_fma instructions`);
for (const i of at) NEW.forEach((b, k) => { bytes[i + k] = b; });
writeFileSync(file, bytes);
console.log(`relaxed_opcodes: ${file}: ${fma} f32x4.relaxed_fma -> f32x4.relaxed_madd`);
