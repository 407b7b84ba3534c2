// The CLI's --counts: a GROUP BY's `bucket,count` lines in, one release
// out.
import { readFileSync } from 'node:fs';

import { openSession } from './cli-ledger.js';
import { printReleases, releaseEntry } from './cli-output.js';
import { NUMBER, UsageError, parseBudget, parseNumberOption } from './cli-usage.js';
import { loadDpQuantiles, type CountsOptions, type DpQuantiles, type QuantileMethod } from './node.js';

// --counts: `bucket,count` lines (a GROUP BY's output) in, a release from
// the counts out. The counts are as sensitive as the rows: only the JSON this
// prints is private.
export async function countsMain(
  args: {
    buckets?: string;
    lower?: string;
    upper?: string;
    epsilon?: string;
    rho?: string;
    quantiles: string[];
    method?: string;
    budget?: string;
    session?: string;
    confidence?: string;
    'interval-share'?: string;
    interval?: string;
    simultaneous?: boolean;
    seed?: string;
    column?: string;
    'user-column'?: string;
    step?: string;
    'estimate-bounds'?: string;
    'show-true'?: boolean;
  },
  file: string,
): Promise<void> {
  for (const flag of ['column', 'user-column', 'step', 'estimate-bounds'] as const) {
    if (args[flag] !== undefined) throw new UsageError(`--${flag} does not apply to --counts`);
  }
  if (args['show-true']) throw new UsageError('--show-true needs the rows, not counts');
  const buckets = parseNumberOption('buckets', args.buckets);
  if (buckets === undefined || !Number.isSafeInteger(buckets) || buckets < 1) {
    throw new UsageError('--counts needs --buckets B, the number of equal-width buckets (a whole number >= 1)');
  }
  if (args.lower === undefined || args.upper === undefined) {
    throw new UsageError('--lower and --upper are required: the public bounds the buckets divide');
  }
  const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  const counts = new Float64Array(buckets);
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const [bucketText, countText] = line.split(/[,;\t]/).map((cell) => cell.trim());
    if (i === 0 && !NUMBER.test(bucketText ?? '')) return; // a header
    const bucket = Number(bucketText);
    const count = Number(countText);
    if (!NUMBER.test(bucketText ?? '') || !Number.isInteger(bucket) || bucket < 0 || bucket >= buckets) {
      throw new UsageError(`line ${i + 1}: bucket '${bucketText}' is not a whole number from 0 to ${buckets - 1}`);
    }
    if (!NUMBER.test(countText ?? '')) throw new UsageError(`line ${i + 1}: count '${countText}' is not a number`);
    counts[bucket] += count;
  });
  const quantileSets = (args.quantiles.length > 0 ? args.quantiles : ['0.25,0.5,0.75']).map((set) =>
    set.split(',').map((q) => parseNumberOption('quantiles', q) as number),
  );
  const options = {
    lower: parseNumberOption('lower', args.lower) as number,
    upper: parseNumberOption('upper', args.upper) as number,
    epsilon: parseNumberOption('epsilon', args.epsilon),
    rho: parseNumberOption('rho', args.rho),
    method: (args.method ?? 'auto') as QuantileMethod | 'auto',
    seed: parseNumberOption('seed', args.seed),
    confidence: parseNumberOption('confidence', args.confidence),
    intervalShare: parseNumberOption('interval-share', args['interval-share']),
    interval: args.interval as 'sample' | 'population' | undefined,
    simultaneous: args.simultaneous,
  };
  const dpq = await loadDpQuantiles();
  const { session, close } = openSession(dpq, args, 'add-remove');
  try {
    const releases = quantileSets.map((quantiles) => {
      const releaseOptions = { ...options, quantiles } as CountsOptions;
      const release =
        session === undefined ? dpq.releaseFromCounts(counts, releaseOptions) : session.releaseFromCounts(counts, releaseOptions);
      return releaseEntry(release, quantiles);
    });
    printReleases(
      { counts: { buckets, resolution: (options.upper - options.lower) / buckets }, bounds: [options.lower, options.upper] },
      releases,
      session,
    );
  } finally {
    close();
  }
}
