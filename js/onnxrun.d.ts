// onnxrun.d.ts - TypeScript declarations of the onnxrun package (js/onnxrun.mjs, js/node.mjs):
// ONNX Runtime Web's API shape. Checked by tests/web/types_check.ts with `tsc --noEmit`.

export declare const version: string;

export declare namespace Tensor {
	/** Every element type the library takes. float16 and bfloat16 are raw bits in a
	 * Uint16Array; complex64/complex128 interleave real and imaginary parts (2 numbers per
	 * element); bool is a Uint8Array of 0/1. */
	type Type = 'float32' | 'float16' | 'bfloat16' | 'float64' | 'int8' | 'int16' | 'int32' | 'int64'
		| 'uint8' | 'uint16' | 'uint32' | 'uint64' | 'bool' | 'string' | 'complex64' | 'complex128';
	interface DataTypeMap {
		float32: Float32Array; float16: Uint16Array; bfloat16: Uint16Array; float64: Float64Array;
		int8: Int8Array; int16: Int16Array; int32: Int32Array; int64: BigInt64Array;
		uint8: Uint8Array; uint16: Uint16Array; uint32: Uint32Array; uint64: BigUint64Array;
		bool: Uint8Array; string: string[]; complex64: Float32Array; complex128: Float64Array;
	}
	type DataType = DataTypeMap[Type];
}

export declare class Tensor {
	/** new Tensor(type, data, dims): data kept, not copied; dims default to [data.length]. */
	constructor(type: Tensor.Type, data: Tensor.DataType | readonly number[] | readonly bigint[] | readonly string[], dims?: readonly number[]);
	/** new Tensor(data, dims): the type from the typed array (string[] is 'string'). */
	constructor(data: Exclude<Tensor.DataType, string[]> | Uint8ClampedArray | readonly string[], dims?: readonly number[]);
	readonly type: Tensor.Type;
	readonly data: Tensor.DataType;
	readonly dims: readonly number[];
	readonly size: number;
	readonly location: 'cpu';
	getData(): Promise<Tensor.DataType>;
	dispose(): void;
}

/** Errors of the package: `message` is the library's (naming the node or input at fault),
 * `status` its status string ('invalid input', 'invalid model', 'invalid argument', ...). */
export declare class OnnxrunError extends Error {
	readonly status: string;
}

export declare namespace InferenceSession {
	interface SessionOptions {
		/** 'wasm' (or 'cpu'); anything else alone is an error. */
		executionProviders?: readonly (string | { name: string })[];
		/** Threads of this session, at most env.wasm.numThreads; only the threads build has more than 1. */
		intraOpNumThreads?: number;
		/** Accepted for ONNX Runtime Web code; onnxrun has nothing to set with them. */
		interOpNumThreads?: number;
		graphOptimizationLevel?: 'disabled' | 'basic' | 'extended' | 'all';
		executionMode?: 'sequential' | 'parallel';
		logSeverityLevel?: number;
	}
	interface ValueMetadata {
		readonly name: string;
		readonly isTensor: true;
		readonly type: Tensor.Type | 'undefined';
		/** numbers, the symbolic name of a dim, or null when unknown; undefined for unknown rank */
		readonly shape: readonly (number | string | null)[] | undefined;
	}
	type FeedsType = { readonly [name: string]: Tensor };
	type FetchesType = readonly string[] | { readonly [name: string]: Tensor | null };
	type ReturnType = { readonly [name: string]: Tensor };
	interface RunOptions { [key: string]: unknown }
	interface Backend {
		readonly build: 'simd' | 'relaxed' | 'threads' | 'relaxed-threads';
		readonly threads: number;
		readonly proxy: boolean;
	}
}

export declare class InferenceSession {
	/** A model by URL (a path under node) or its bytes. */
	static create(urlOrBytes: string | URL | ArrayBufferLike | ArrayBufferView, options?: InferenceSession.SessionOptions): Promise<InferenceSession>;
	static create(buffer: ArrayBufferLike, byteOffset: number, byteLength?: number, options?: InferenceSession.SessionOptions): Promise<InferenceSession>;
	readonly inputNames: readonly string[];
	readonly outputNames: readonly string[];
	readonly inputMetadata: readonly InferenceSession.ValueMetadata[];
	readonly outputMetadata: readonly InferenceSession.ValueMetadata[];
	/** Which build runs the session, its threads, and whether it lives in the proxy worker. */
	readonly backend: InferenceSession.Backend;
	run(feeds: InferenceSession.FeedsType, fetches?: InferenceSession.FetchesType, options?: InferenceSession.RunOptions): Promise<InferenceSession.ReturnType>;
	run(feeds: InferenceSession.FeedsType, options?: InferenceSession.RunOptions): Promise<InferenceSession.ReturnType>;
	release(): Promise<void>;
	startProfiling(): void;
	endProfiling(): void;
}

export interface WebAssemblyFlags {
	/** Threads per session; 0 (default) = min(4, navigator.hardwareConcurrency). */
	numThreads: number;
	/** false: never pick the relaxed SIMD build. */
	relaxedSimd: boolean;
	/** Run sessions in a Web Worker (browsers). */
	proxy: boolean;
	/** Folder (URL; a path under node) of the build files; default: dist/ beside the package. */
	wasmPaths: string | URL | undefined;
	/** The build chosen at the first session. */
	readonly build: 'simd' | 'relaxed' | 'threads' | 'relaxed-threads' | undefined;
	/** Use this build instead of choosing one. */
	forceBuild: 'simd' | 'relaxed' | 'threads' | 'relaxed-threads' | undefined;
}

export declare const env: {
	wasm: WebAssemblyFlags;
	logLevel: 'verbose' | 'info' | 'warning' | 'error' | 'fatal';
	readonly versions: { readonly onnxrun: string };
};

/** What this engine offers: SIMD128, relaxed SIMD, threads (cross-origin isolated page). */
export declare function features(): { simd: boolean; relaxedSimd: boolean; threads: boolean; hardwareConcurrency: number };

/** Decodes a serialized ONNX TensorProto (.pb file) into a Tensor. */
export declare function decodeTensorProto(bytes: ArrayBufferLike | ArrayBufferView): Promise<Tensor & { name: string }>;
