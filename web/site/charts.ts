// The demo's charts: the CDF with the private quantiles, the small multiples
// of a release by group, and the comparison of mechanisms. Public values
// and the owner's own truth only; nothing here reads the data.
import uPlot from 'uplot';

import { $, format } from './page.js';
import type { CompareRow, ReleaseResult, ReleaseSettings } from './protocol.js';

// A log axis has no 0: an exact release (rank error 0) is drawn here.
const ZERO_ERROR = 0.01;

// Round ticks over [low, high]: steps of 1, 2 or 5 times a power of ten,
// at most `most` of them (a chart's axis, public values only).
function niceTicks(low: number, high: number, most: number): number[] {
  const span = high - low;
  const power = 10 ** Math.floor(Math.log10(span / most));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => span / s <= most) ?? 10 * power;
  const ticks: number[] = [];
  for (let t = Math.ceil(low / step) * step; t <= high + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

// The small multiples as SVG: a row per group, the private quantiles (dots
// joined by a line), their intervals (bars) and the owner's true values
// (open circles), on one x axis spanning every value drawn, with round
// ticks and the column's unit. Drawn at the width it is shown at (never
// scaled down: labels stay 12 px on a phone).
export function drawGroups(groups: NonNullable<ReleaseResult['groups']>, asked: ReleaseSettings, unit: string): void {
  const svgNs = 'http://www.w3.org/2000/svg';
  const figure = $('groups-figure');
  const chart = $('groups-chart');
  if (groups.length === 0) {
    figure.hidden = true;
    return;
  }
  figure.hidden = false; // (measured below)
  const all = groups.flatMap((g) => [...g.values, ...(g.low ?? []), ...(g.high ?? []), ...(g.truth ?? [])]).filter(Number.isFinite);
  let low = Math.min(...all);
  let high = Math.max(...all);
  if (!(high > low)) {
    low -= 1;
    high += 1;
  }
  const width = Math.max(280, Math.min(720, chart.clientWidth || figure.clientWidth || 720));
  const keyOf = (key: string | string[]) => (Array.isArray(key) ? key.join(' · ') : key);
  // Labels up to a third of the width, about 7 px a character at 12 px.
  const longest = Math.max(...groups.map((g) => keyOf(g.key).length));
  const label = Math.min(Math.round(width / 3), 12 + 7 * longest);
  const row = 28;
  const plotLeft = label + 8;
  const plotRight = width - 16;
  const height = groups.length * row + 44;
  const x = (v: number) => plotLeft + ((v - low) / (high - low)) * (plotRight - plotLeft);
  const svg = document.createElementNS(svgNs, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  svg.setAttribute('role', 'img');
  svg.setAttribute(
    'aria-label',
    `Private quantiles ${asked.quantiles.map(format).join(', ')} of ${asked.column}${unit === '' ? '' : ` (${unit})`} by ${asked.groupBy}: ` +
      groups.map((g) => `${keyOf(g.key)} ${g.values.map(format).join(', ')}`).join('; '),
  );
  const add = (name: string, attributes: Record<string, string | number>, text?: string) => {
    const element = document.createElementNS(svgNs, name);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
    if (text !== undefined) element.textContent = text;
    svg.append(element);
    return element;
  };
  groups.forEach((group, r) => {
    const y = r * row + row / 2;
    const name = keyOf(group.key);
    // A label too long for its space ends in an ellipsis; the table has it whole.
    const room = Math.max(3, Math.floor((label - 4) / 7));
    add('text', { x: label, y: y + 4, 'text-anchor': 'end', class: 'group-label' }, name.length > room ? `${name.slice(0, room - 1)}…` : name);
    const finite = group.values.filter(Number.isFinite);
    add('line', { x1: x(Math.min(...finite)), x2: x(Math.max(...finite)), y1: y, y2: y, class: 'group-span' });
    group.values.forEach((v, i) => {
      if (group.low !== undefined && group.high !== undefined) {
        add('line', { x1: x(group.low[i]), x2: x(group.high[i]), y1: y + 6, y2: y + 6, class: 'group-interval' });
      }
      add('circle', { cx: x(v), cy: y, r: 4, class: 'group-private' });
      const truth = group.truth?.[i];
      if (truth !== undefined && Number.isFinite(truth)) add('circle', { cx: x(truth), cy: y, r: 6, class: 'group-truth' });
    });
  });
  const axis = groups.length * row + 6;
  add('line', { x1: plotLeft, x2: plotRight, y1: axis, y2: axis, class: 'group-axis' });
  // Ticks a tick label apart (about 7 px a character, and a gap).
  const ticks = niceTicks(low, high, Math.max(2, Math.floor((plotRight - plotLeft) / 56)));
  for (const t of ticks) {
    add('line', { x1: x(t), x2: x(t), y1: axis, y2: axis + 4, class: 'group-axis' });
    add('text', { x: x(t), y: axis + 16, 'text-anchor': 'middle', class: 'group-tick' }, format(t));
  }
  add('text', { x: plotRight, y: axis + 32, 'text-anchor': 'end', class: 'group-tick' }, `${asked.column}${unit === '' ? '' : ` (${unit})`}`);
  chart.replaceChildren(svg);
}

let comparePlot: uPlot | undefined;

export function drawComparison(rows: CompareRow[], counts: number[]): void {
  const methods = [...new Set(rows.map((r) => r.method))];
  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2'];
  comparePlot?.destroy();
  // The canvas's axes, legend and lines, in words.
  const xLabel = 'quantiles released together (m)';
  const yLabel = 'mean rank error per quantile (rows)';
  $('compare-chart').setAttribute('role', 'img');
  $('compare-chart').setAttribute(
    'aria-label',
    `${yLabel} against ${xLabel} from ${counts[0]} to ${counts[counts.length - 1]}, ` +
      `log scales, one line per mechanism: ${methods.join(', ')}`,
  );
  $('compare-figure').hidden = false;
  $('compare-figure').classList.remove('stale-results');
  comparePlot = new uPlot(
    {
      width: Math.min(720, $('compare-chart').clientWidth || 720),
      height: 320,
      // Base-2 x axis over exactly the counts run (1, 2, 4, ..., 32), so every
      // tick is a point; a log-10 axis ran to 100 with ticks at 1 and 10.
      scales: {
        x: { time: false, distr: 3, log: 2, range: [counts[0], counts[counts.length - 1]] },
        y: { distr: 3 },
      },
      series: [{ label: 'quantiles' }, ...methods.map((m, i) => ({ label: m, stroke: palette[i % palette.length] }))],
      axes: [
        { label: xLabel, splits: () => counts },
        { label: yLabel },
      ],
      legend: { live: false },
    },
    [
      counts,
      ...methods.map((m) =>
        counts.map((c) => Math.max(rows.find((r) => r.method === m && r.m === c)?.meanRankError ?? NaN, ZERO_ERROR)),
      ),
    ],
    $('compare-chart'),
  );
}

let cdfPlot: uPlot | undefined;

export function hideCdf(): void {
  $('cdf-figure').hidden = true;
  cdfPlot?.destroy();
  cdfPlot = undefined;
}

// The owner's true CDF with the private quantiles on it at their levels,
// and their intervals as bars (only where the truth was kept).
export function drawCdf(result: ReleaseResult, asked: ReleaseSettings): void {
  const figure = $('cdf-figure');
  cdfPlot?.destroy();
  cdfPlot = undefined;
  if (result.truth === undefined) {
    figure.hidden = true;
    return;
  }
  figure.hidden = false;
  // Private quantiles drawn at their requested level on the true CDF.
  const [xs, ys] = result.truth.cdf;
  const points = asked.quantiles.map((q, i) => [result.values[i], q] as const).sort((a, b) => a[0] - b[0]);
  // The x scale also spans the intervals, so their bars fit the plot.
  const ends = result.intervals === undefined ? [] : [...result.intervals.low, ...result.intervals.high];
  const allX = [...new Set([...xs, ...points.map((p) => p[0]), ...ends])].sort((a, b) => a - b);
  const yAt = new Map(xs.map((x, i) => [x, ys[i]]));
  // Every private quantile is drawn, those that share a value too (an atom:
  // 0 mm of rain for the first five deciles), in the draw hook below; one
  // point per x in the series' data would keep only one of them.
  $('cdf-chart').dataset.privatePoints = String(points.length);
  cdfPlot = new uPlot(
    {
      width: Math.min(720, $('cdf-chart').clientWidth || 720),
      height: 300,
      scales: { x: { time: false }, y: { range: [0, 1] } },
      series: [
        {},
        { label: 'true CDF (owner only)', stroke: '#555', spanGaps: true },
        { label: 'private quantiles', stroke: '#c0392b', width: 0, points: { show: true, size: 8, fill: '#c0392b' } },
      ],
      axes: [{ label: asked.column }, { label: 'fraction of rows' }],
      // Static legend: series names, not "--" placeholders for hovered values.
      legend: { live: false },
      // Private intervals as horizontal error bars at each quantile's level.
      hooks: {
        draw: [
          (u: uPlot) => {
            const context = u.ctx;
            context.save();
            context.fillStyle = '#c0392b';
            for (const [x, q] of points) {
              context.beginPath();
              context.arc(u.valToPos(x, 'x', true), u.valToPos(q, 'y', true), 4 * devicePixelRatio, 0, 2 * Math.PI);
              context.fill();
            }
            context.restore();
          },
          (u: uPlot) => {
            const intervals = result.intervals;
            if (intervals === undefined) return;
            const context = u.ctx;
            context.save();
            context.beginPath();
            context.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
            context.clip();
            context.strokeStyle = '#c0392b';
            context.lineWidth = 2 * devicePixelRatio;
            asked.quantiles.forEach((q, i) => {
              const y = u.valToPos(q, 'y', true);
              const x0 = u.valToPos(intervals.low[i], 'x', true);
              const x1 = u.valToPos(intervals.high[i], 'x', true);
              const tick = 4 * devicePixelRatio;
              context.beginPath();
              context.moveTo(x0, y);
              context.lineTo(x1, y);
              context.moveTo(x0, y - tick);
              context.lineTo(x0, y + tick);
              context.moveTo(x1, y - tick);
              context.lineTo(x1, y + tick);
              context.stroke();
            });
            context.restore();
          },
        ],
      },
    },
    [allX, allX.map((x) => yAt.get(x) ?? null), allX.map(() => null)],
    $('cdf-chart'),
  );
}
