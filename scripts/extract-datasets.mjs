// Build step of the demo site: the built-in datasets, taken from the pinned
// vega-datasets package and reduced to their numeric columns, written as one
// JSON file the site bundles. Nothing is fetched at run time.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parse } from 'csv-parse/sync';

const root = fileURLToPath(new URL('..', import.meta.url));
const data = join(root, 'node_modules/vega-datasets/data');

function fromCsv(file, columns) {
  const rows = parse(readFileSync(join(data, file), 'utf8'), { columns: true });
  return Object.fromEntries(columns.map((c) => [c, rows.map((r) => (r[c] === '' ? null : Number(r[c])))]));
}

function fromJson(file, columns) {
  const rows = JSON.parse(readFileSync(join(data, file), 'utf8'));
  return Object.fromEntries(columns.map((c) => [c, rows.map((r) => (typeof r[c] === 'number' ? r[c] : null))]));
}

const datasets = [
  {
    id: 'seattle',
    label: 'Seattle weather 2012–2015 (daily)',
    source: 'vega-datasets seattle-weather.csv',
    columns: fromCsv('seattle-weather.csv', ['precipitation', 'temp_max', 'temp_min', 'wind']),
  },
  {
    id: 'flights',
    label: 'US flights, 20,000 departures',
    source: 'vega-datasets flights-20k.json',
    columns: fromJson('flights-20k.json', ['delay', 'distance']),
  },
  {
    id: 'movies',
    label: 'Movies (IMDB and Rotten Tomatoes)',
    source: 'vega-datasets movies.json',
    columns: fromJson('movies.json', ['IMDB Rating', 'Rotten Tomatoes Rating', 'Running Time min']),
  },
];

const out = join(root, 'web/site/generated');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'datasets.json'), JSON.stringify(datasets));
// The page lists the datasets; only the worker holds their values.
writeFileSync(join(out, 'dataset-list.json'), JSON.stringify(datasets.map(({ id, label }) => ({ id, label }))));
console.log(`datasets: ${datasets.map((d) => d.id).join(', ')}`);
