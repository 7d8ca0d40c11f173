// node.mjs - the package's entry under node (package.json "exports", condition "node"): the
// same API as onnxrun.mjs, with model paths and file: URLs read from the file system.
// Sessions run on the calling thread with the single-threaded builds (env.wasm.proxy and the
// threads build are for browsers).
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { platform } from './onnxrun.mjs';

platform.isNode = true;
platform.readFile = async (url) => new Uint8Array(await readFile(url));
platform.pathToUrl = (p) => pathToFileURL(path.resolve(p) + (p.endsWith('/') ? '/' : ''));

export * from './onnxrun.mjs';
