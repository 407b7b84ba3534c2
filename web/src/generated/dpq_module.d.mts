// Types of the Emscripten module built from wasm/bindings.cc (see
// CMakeLists.txt). Hand-written: Emscripten 3.1.6 does not emit them.

export interface WasmReleaseResult {
  code: number;
  codeName: string;
  message: string;
  method: string;
  privacyKind: string;
  epsilon: number;
  delta: number;
  rho: number;
  neighbouring: string;
  levels: number;
  mechanismEpsilon: number;
}

export interface WasmReleaseSpec {
  method: string;
  lower: number;
  upper: number;
  epsilon?: number;
  rho?: number;
  seed?: number;
  options?: Record<string, number | string>;
}

export interface WasmSanitizeSpec {
  lower: number;
  upper: number;
  epsilon?: number;
  rho?: number;
  size?: number;
  seed?: number;
}

export interface DpqWasmModule {
  HEAPF64: Float64Array;
  HEAP8: Int8Array;
  _malloc(bytes: number): number;
  _free(address: number): void;
  release(
    dataAddress: number,
    count: number,
    quantilesAddress: number,
    quantileCount: number,
    outAddress: number,
    spec: WasmReleaseSpec,
  ): WasmReleaseResult;
  sanitize(
    dataAddress: number,
    count: number,
    outAddress: number,
    spec: WasmSanitizeSpec,
  ): WasmReleaseResult;
  sanitizeSize(spec: WasmSanitizeSpec): number;
  methods(): string;
}

export interface DpqModuleOverrides {
  /** Fills the array with cryptographically secure random bytes. */
  dpqFillRandom: (bytes: Uint8Array) => void;
}

declare function createDpqModule(
  overrides: DpqModuleOverrides,
): Promise<DpqWasmModule>;
export default createDpqModule;
