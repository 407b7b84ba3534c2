// The demo's results in words and tables: the summary, the quantiles (one
// table, or one row a group and quantile), the session's spending, and the
// notes for the data's owner. The charts are in charts.ts.
import { drawCdf, drawGroups, hideCdf } from './charts.js';
import { $, budgetText, format } from './page.js';
import type { ReleaseResult, ReleaseSettings } from './protocol.js';

// Results on screen that no longer match the settings (the last request
// failed, or the data changed) are greyed and labelled, never left as if
// current.
export function markStale(why: string | undefined): void {
  const stale = why !== undefined && !$('results').hidden;
  $('results-box').classList.toggle('stale-results', stale);
  $('stale').hidden = !stale;
  $('stale').textContent = stale ? `The results below are from an earlier release, not these settings: ${why}` : '';
  if (why !== undefined && !$('compare-figure').hidden) $('compare-figure').classList.add('stale-results');
}

export function clearResults(): void {
  markStale(undefined);
  $('results').hidden = true;
  $('group-results').hidden = true;
  $('group-note').hidden = true;
  $('groups-figure').hidden = true;
  $('cdf-figure').hidden = true;
  $('compare-figure').hidden = true;
  $('compare-figure').classList.remove('stale-results');
  $('summary').textContent = '';
  $('summary-owner').hidden = true;
}

// Spending is cumulative per dataset: two releases spend twice.
export function showSession(session: ReleaseResult['session']): void {
  $('new-budget').hidden = session === undefined;
  $('session-summary').hidden = session === undefined;
  if (session !== undefined) {
    $('session-summary').textContent =
      `Spent on this dataset so far: ${budgetText(session.spent)} in ${session.releases} release${session.releases === 1 ? '' : 's'}, ` +
      `of a session total of ${budgetText(session.total)}. Every release adds to it, and the budget is kept across reloads of this page.`;
  }
}

// A release by group: the summary, a table of (group, quantile) rows, and
// the small multiples (one row a group on one shared axis).
// What the default's step look spent and found (public), for a summary.
function stepLookText(result: ReleaseResult, where: string): string {
  if (result.stepLook === undefined) return '';
  return (
    ` It first looked ${where}for the values' step with ${result.stepLook.share * 100}% of that: ` +
    (result.stepLook.step === null
      ? 'none found, so the finest grid.'
      : `found ${format(result.stepLook.step)}, so values are multiples of it.`)
  );
}

function showGroups(result: ReleaseResult, asked: ReleaseSettings, unit: string): void {
  const groups = result.groups ?? [];
  const privacy = budgetText(result.privacy);
  $('summary').textContent =
    `${result.method}: ${asked.quantiles.length} quantile${asked.quantiles.length === 1 ? '' : 's'} for each of ` +
    `${groups.length} group${groups.length === 1 ? '' : 's'} of ${asked.groupBy} in ${result.milliseconds.toFixed(1)} ms, ` +
    `spending ${privacy} once for all of them (each group holds different rows)` +
    (result.keys === 'private' ? '; the groups shown were chosen by a noisy count of their rows.' : '.') +
    (result.maxContributions === undefined ? '' : ` Each person counted in one group, with at most ${result.maxContributions} value${result.maxContributions === 1 ? '' : 's'}.`) +
    stepLookText(result, 'over every group ');
  showSession(result.session);
  $('summary-owner').hidden = true;
  markStale(undefined);
  $('results').hidden = true;
  hideCdf();
  const intervals = groups.some((g) => g.low !== undefined);
  $('group-interval-header').hidden = !intervals;
  $<HTMLTableElement>('group-results').tBodies[0].replaceChildren(
    ...groups.flatMap((group) =>
      asked.quantiles.map((q, i) => {
        const row = document.createElement('tr');
        if (group.look !== undefined) row.dataset.look = group.look.found === undefined ? 'none' : 'found';
        const cells = [
          i === 0 ? group.key : '',
          format(q),
          format(group.values[i]),
          ...(intervals ? [group.low === undefined ? '—' : `${format(group.low[i])} to ${format((group.high as number[])[i])}`] : []),
          format(group.truth?.[i] ?? Number.NaN),
        ];
        cells.forEach((text, c) => {
          const cell = document.createElement(c === 0 ? 'th' : 'td');
          if (c === 0) cell.setAttribute('scope', 'row');
          if (c === cells.length - 1) cell.className = 'owner';
          cell.textContent = text;
          row.append(cell);
        });
        return row;
      }),
    ),
  );
  $('group-results').hidden = false;
  showUnplacedTails(groups, asked);
  drawGroups(groups, asked, unit);
}

// Groups whose first look found no bin holding many of their values draw
// their tails almost as if the values could lie anywhere in the bounds:
// penguins by species in 0-10 kg, p95 and p99, ε = 1: a value off by over
// 1 kg in 84-91% of such groups' releases, 26-37% where the look found the
// values (docs/groups.md). Said where tails are asked; public results only.
const TAIL_QUANTILE = 0.1;

function showUnplacedTails(groups: NonNullable<ReleaseResult['groups']>, asked: ReleaseSettings): void {
  const note = $('group-note');
  const tails = asked.quantiles.filter((q) => q <= TAIL_QUANTILE || q >= 1 - TAIL_QUANTILE);
  const unplaced = groups.filter((g) => g.look !== undefined && g.look.found === undefined).map((g) => g.key);
  note.hidden = tails.length === 0 || unplaced.length === 0;
  const one = unplaced.length === 1;
  const named =
    tails.length <= 4
      ? tails.map((q) => format(q)).join(', ')
      : `the quantiles at or below ${format(TAIL_QUANTILE)} and at or above ${format(1 - TAIL_QUANTILE)}`;
  note.textContent = note.hidden
    ? ''
    : `Tails far from the data, likely, for ${unplaced.join(', ')}: ${one ? 'its' : 'each one\'s'} first look found ` +
      `no part of the bounds holding many of ${one ? 'its' : 'their'} values, so ${named} ` +
      `${tails.length === 1 ? 'is' : 'are'} drawn almost as if the values could lie anywhere between the bounds. ` +
      `Tails of small groups stay uncertain even where a look found the values; intervals show how much. ` +
      `Narrower bounds or a larger budget help.`;
}

export function showResult(result: ReleaseResult, asked: ReleaseSettings, unit: string): void {
  if (result.groups !== undefined) {
    showGroups(result, asked, unit);
    return;
  }
  $('group-results').hidden = true;
  $('group-note').hidden = true;
  $('groups-figure').hidden = true;
  const privacy = budgetText(result.privacy);
  $('summary').textContent =
    `${result.method}: ${asked.quantiles.length} quantile${asked.quantiles.length === 1 ? '' : 's'} in ` +
    `${result.milliseconds.toFixed(1)} ms, spending ${privacy} ` +
    `(neighbouring: ${result.neighbouring}` +
    (result.maxContributions === undefined
      ? ').'
      : `: each person kept at most ${result.maxContributions} value${result.maxContributions === 1 ? '' : 's'}).`) +
    stepLookText(result, '') +
    (result.firstLook === undefined
      ? ''
      : ` Its first look, ${Math.round(result.firstLook.share * 100)}% of that, ` +
        // Where it saw most of them (past two noise scales): on values
        // spread over the bounds, the span past five (`found`) is a part.
        (result.firstLook.seen === undefined
          ? 'saw no clear place where the values lie.'
          : `saw the values between ${format(result.firstLook.seen[0])} and ${format(result.firstLook.seen[1])}.`)) +
    (result.intervals === undefined
      ? ''
      : ` The ${Math.round(result.intervals.confidence * 100)}% ` +
        `${result.intervals.kind === 'population' ? 'population ' : ''}intervals` +
        `${result.intervals.simultaneous ? ', holding all at once,' : ''} spent ` +
        budgetText(result.intervals.privacy) +
        ' of it.');
  showSession(result.session);
  // The row count is not private: it goes with the owner-only values.
  const outside = result.truth?.outside ?? 0;
  $('summary-owner').hidden = result.streamed === undefined && result.counted === undefined && outside <= 0.5;
  $('summary-owner').textContent = outside > 0.5
    ? `Owner only, not private: ${Math.round(outside * 100)}% of the values lie outside the bounds ` +
      `${format(asked.lower)} to ${format(asked.upper)} and were clamped to them, so the private values sit at a bound. ` +
      'Choose bounds that cover the data.'
    : result.streamed
    ? `Owner only, not private: streamed ${result.streamed.values.toLocaleString('en')} values through a ` +
      `${Math.round(result.streamed.sketchBytes / 1024)} KiB sketch` +
      (result.streamed.workers > 1 ? `, sketched on ${result.streamed.workers} cores and merged.` : '.')
    : result.counted
      ? `Owner only, not private: counted ${result.counted.values.toLocaleString('en')} values into ` +
        `${result.counted.buckets.toLocaleString('en')} buckets of width ${format(result.counted.width)}; ` +
        'only the counts reached the library, and values are bucket lower edges. True values are to the bucket.'
      : '';
  markStale(undefined);
  $('interval-header').hidden = result.intervals === undefined;
  $('interval-header').textContent =
    `Private 95% interval${result.intervals?.simultaneous ? 's, all at once' : ''}` +
    (result.intervals?.kind === 'population' ? ' (population)' : '');
  const body = $<HTMLTableElement>('results').tBodies[0];
  body.replaceChildren(
    ...asked.quantiles.map((q, i) => {
      const row = document.createElement('tr');
      // The interval column only when intervals were asked for (it would
      // not fit a phone otherwise).
      const interval = result.intervals === undefined
        ? []
        : [`${format(result.intervals.low[i])} to ${format(result.intervals.high[i])}`];
      const owner = format(result.truth?.values[i] ?? Number.NaN);
      const cells = [format(q), format(result.values[i]), ...interval, owner,
        result.truth ? String(result.truth.rankErrors[i]) : 'not kept (streamed)'];
      cells.forEach((text, c) => {
        const cell = document.createElement(c === 0 ? 'th' : 'td');
        if (c === 0) cell.setAttribute('scope', 'row');
        if (c >= 2 + interval.length) cell.className = 'owner';
        cell.textContent = text;
        row.append(cell);
      });
      return row;
    }),
  );
  $('results').hidden = false;
  drawCdf(result, asked);
}
