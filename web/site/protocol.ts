// Messages between the page and its worker. All data and all computation stay
// in the worker; the page sends settings and receives private results (and,
// for the data owner's eyes, the true values).
import type { SavedSession } from '../../dist/browser.js';

export interface ColumnInfo {
  name: string;
  /** Rows whose cell is a number. */
  numbers: number;
  /** Rows whose cell is empty or not a number: counted, never mixed in. */
  others: number;
}

export interface ReleaseSettings {
  column: string;
  lower: number;
  upper: number;
  quantiles: number[];
  budget: { epsilon: number } | { rho: number };
  method: string;
  /** Public output resolution; undefined for the finest grid. */
  step?: number;
  /** Streams (large files): sketch accuracy. */
  alpha?: number;
  /** Streams: sketch workers to use (the page's ?workers=N; default: cores, at most 4). */
  workers?: number;
  /** Protect a person, named by this column, keeping at most k values each. */
  person?: { column: string; maxContributions: number };
  /** Confidence intervals at this level (they spend a quarter of the budget). */
  confidence?: number;
  /** What the intervals hold: this data's quantiles, or the population's. */
  interval?: 'sample' | 'population';
  /** The intervals hold all at once (not each on its own). */
  simultaneous?: boolean;
  /** A release per group of this column (docs/groups.md). */
  groupBy?: string;
}

export type Request =
  /** `ledger`: the dataset's saved session (the page keeps it in localStorage). */
  | { type: 'builtin'; id: string; ledger?: SavedSession }
  | { type: 'file'; file: File; ledger?: SavedSession }
  /** Starts a new budget for the loaded dataset (the old ledger is dropped). */
  | { type: 'new-budget' }
  /**
   * `ledger` on a release or bounds: the newest saved ledger (another tab
   * may have spent since this one read it); the worker spends from it.
   */
  | { type: 'release'; settings: ReleaseSettings; ledger?: SavedSession }
  | {
      type: 'bounds';
      column: string;
      budget: { epsilon: number } | { rho: number };
      /** Per person: the bounds then protect a person too. */
      person?: { column: string; maxContributions: number };
      ledger?: SavedSession;
    }
  | { type: 'compare'; settings: ReleaseSettings; trials: number; counts: number[]; methods: string[] };

export interface ReleaseResult {
  values: number[];
  method: string;
  privacy: Record<string, number | string>;
  neighbouring: string;
  /** Per-person releases: the k each person was bounded to. */
  maxContributions?: number;
  /** The default's step look: its share of the budget, and the step it found. */
  stepLook?: { share: number; step: number | null };
  /** AQ's first look: its share of the budget, and where it saw values. */
  firstLook?: { share: number; found?: [number, number]; seen?: [number, number] };
  /** Private intervals, one per quantile, and what they spent. */
  intervals?: {
    low: number[];
    high: number[];
    confidence: number;
    kind: 'sample' | 'population';
    simultaneous: boolean;
    privacy: Record<string, number | string>;
  };
  milliseconds: number;
  /** The data owner's view (absent for streamed files): true quantiles. */
  truth?: {
    values: number[];
    rankErrors: number[];
    cdf: [number[], number[]];
    /** The share of the values outside the bounds (clamped to them). */
    outside?: number;
  };
  /** Streamed files: values read, sketch size and the workers that sketched. */
  streamed?: { values: number; sketchBytes: number; workers: number };
  /** Parquet files: values counted and the buckets they were counted in. */
  counted?: { values: number; buckets: number; width: number };
  /** The dataset's privacy session after this release, and its ledger to keep. */
  session?: { spent: Record<string, number>; total: Record<string, number>; releases: number; ledger: SavedSession };
  /**
   * A release by group: each released group's values (and intervals), and
   * for the data owner its true values; public keys (the dataset's
   * documented categories) or private ones chosen by a noisy count.
   */
  groups?: {
    key: string;
    values: number[];
    low?: number[];
    high?: number[];
    truth?: number[];
    /** The group's first look (AQ), public: `found` absent when no bin passed. */
    look?: { found?: [number, number] };
  }[];
  keys?: 'public' | 'private';
}

export interface CompareRow {
  method: string;
  m: number;
  meanRankError: number;
}

export type Reply =
  | {
      type: 'columns';
      columns: ColumnInfo[];
      rows: number;
      large: boolean;
      /** A Parquet file: counted per bucket at release time, never held. */
      counted?: boolean;
      name: string;
      /** Columns that can name the person of each row (per-person releases). */
      people: string[];
      /** Columns to group by (few distinct values), and the one to start with. */
      groups: string[];
      groupBy?: string;
    }
  | { type: 'progress'; done: number; total: number; label: string }
  | { type: 'result'; result: ReleaseResult }
  | { type: 'compared'; rows: CompareRow[] }
  | {
      type: 'bounds';
      lower: number;
      upper: number;
      privacy: Record<string, number | string>;
      neighbouring: string;
      session?: ReleaseResult['session'];
    }
  | { type: 'error'; code: string; message: string; session?: ReleaseResult['session'] };
