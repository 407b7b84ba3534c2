// A release's spec and report travel through one block of doubles in the
// WebAssembly heap (wasm/bindings.cc): reading a dozen properties through
// embind and building a result object of twenty fields cost about what a
// small release's draws do. The module names the slots (releaseLayout), so
// nothing here hard-codes an index; a module and a package that disagree on
// a slot fail at load, not with wrong numbers.
import type {
  DpqWasmModule,
  WasmReleaseExtra,
  WasmReleaseResult,
  WasmReleaseSpec,
} from './generated/dpq_module.mjs';

interface Layout {
  spec: string[];
  report: string[];
  privacyKinds: string[];
  neighbourings: string[];
  intervalMethods: string[];
}

const SPEC_SLOTS = [
  'method',
  'lower',
  'upper',
  'epsilon',
  'rho',
  'seed',
  'buckets',
  'confidence',
  'intervalShare',
  'simultaneous',
  'users',
  'maxContributions',
  'present',
] as const;
const REPORT_SLOTS = [
  'code',
  'method',
  'privacyKind',
  'epsilon',
  'delta',
  'rho',
  'neighbouring',
  'levels',
  'mechanismEpsilon',
  'resolution',
  'recordCap',
  'maxContributions',
  'hasIntervals',
  'intervalEpsilon',
  'intervalRho',
  'intervalPopulation',
  'intervalSimultaneous',
  'intervalMethod',
  'lookShare',
  'lookLow',
  'lookHigh',
  'lookSeenLow',
  'lookSeenHigh',
  'stepLookShare',
  'stepLookStep',
] as const;

export interface ReleaseBlock {
  /** Doubles a block takes. */
  readonly size: number;
  /** Writes `spec` at heap index `at`; what the block cannot hold goes in the returned extra. */
  write(heap: Float64Array, at: number, spec: WasmReleaseSpec): WasmReleaseExtra | undefined;
  /** The report at heap index `at`, or the failure's code, name and message. */
  read(heap: Float64Array, at: number): WasmReleaseResult;
}

/** The block of a loaded module whose release methods are `methods`. */
export function releaseBlock(module: DpqWasmModule, methods: readonly string[]): ReleaseBlock {
  const layout = JSON.parse(module.releaseLayout()) as Layout;
  const index = (names: string[], name: string, offset: number): number => {
    const i = names.indexOf(name);
    if (i < 0) throw new Error(`dp-quantiles: the WebAssembly module has no release slot '${name}'; package and module differ`);
    return offset + i;
  };
  const spec = Object.fromEntries(SPEC_SLOTS.map((name) => [name, index(layout.spec, name, 0)])) as Record<
    (typeof SPEC_SLOTS)[number],
    number
  >;
  const report = Object.fromEntries(REPORT_SLOTS.map((name) => [name, index(layout.report, name, layout.spec.length)])) as Record<
    (typeof REPORT_SLOTS)[number],
    number
  >;
  const size = layout.spec.length + layout.report.length;
  // Optional numbers: the value, and its bit in the 'present' slot (a NaN
  // given is the core's to refuse, not an absent value).
  const OPTIONAL = ['epsilon', 'rho', 'seed', 'buckets', 'confidence', 'intervalShare', 'users', 'maxContributions'] as const;

  return {
    size,
    write(heap, at, s) {
      const known = s.method === 'auto' ? -1 : methods.indexOf(s.method as never);
      heap[at + spec.method] = known === -1 && s.method !== 'auto' ? -2 : known;
      heap[at + spec.lower] = s.lower;
      heap[at + spec.upper] = s.upper;
      let present = 0;
      for (const name of OPTIONAL) {
        const value = s[name];
        if (value === undefined) continue;
        heap[at + spec[name]] = value;
        present += 2 ** spec[name];
      }
      if (s.simultaneous !== undefined) {
        heap[at + spec.simultaneous] = s.simultaneous ? 1 : 0;
        present += 2 ** spec.simultaneous;
      }
      heap[at + spec.present] = present;
      const hasOptions = s.options !== undefined && Object.keys(s.options).length > 0;
      if (!hasOptions && s.interval === undefined && s.session === undefined && heap[at + spec.method] !== -2) {
        return undefined;
      }
      return { method: s.method, options: s.options, interval: s.interval, session: s.session };
    },
    read(heap, at) {
      const code = heap[at + report.code];
      if (code !== 0) return { ...module.lastReleaseError(), code };
      const name = (names: readonly string[], slot: number): string => names[heap[at + slot]] ?? '';
      return {
        code: 0,
        codeName: 'OK',
        message: '',
        method: name(methods, report.method),
        privacyKind: name(layout.privacyKinds, report.privacyKind),
        epsilon: heap[at + report.epsilon],
        delta: heap[at + report.delta],
        rho: heap[at + report.rho],
        neighbouring: name(layout.neighbourings, report.neighbouring),
        levels: heap[at + report.levels],
        mechanismEpsilon: heap[at + report.mechanismEpsilon],
        resolution: heap[at + report.resolution],
        recordCap: heap[at + report.recordCap],
        maxContributions: heap[at + report.maxContributions],
        hasIntervals: heap[at + report.hasIntervals] !== 0,
        intervalEpsilon: heap[at + report.intervalEpsilon],
        intervalRho: heap[at + report.intervalRho],
        intervalPopulation: heap[at + report.intervalPopulation] !== 0,
        intervalSimultaneous: heap[at + report.intervalSimultaneous] !== 0,
        intervalMethod: name(layout.intervalMethods, report.intervalMethod),
        lookShare: heap[at + report.lookShare],
        lookLow: heap[at + report.lookLow],
        lookHigh: heap[at + report.lookHigh],
        lookSeenLow: heap[at + report.lookSeenLow],
        lookSeenHigh: heap[at + report.lookSeenHigh],
        stepLookShare: heap[at + report.stepLookShare],
        stepLookStep: heap[at + report.stepLookStep],
      };
    },
  };
}
