// Types of the Emscripten module built from wasm/bindings.cc (see
// CMakeLists.txt). Hand-written: Emscripten 3.1.6 does not emit them.

export interface WasmReleaseResult {
  code: number;
  codeName: string;
  message: string;
  method: string;
  privacyKind: string;
  epsilon: number;
  rho: number;
  levels: number;
  epsilonPerLevel: number;
}

export interface WasmReleaseSpec {
  method: string;
  lower: number;
  upper: number;
  epsilon?: number;
  rho?: number;
  seed?: number;
  options?: Record<string, number>;
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
