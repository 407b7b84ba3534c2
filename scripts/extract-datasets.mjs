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

// Text columns that name a person (row-aligned with the numeric ones).
function textFromJson(file, columns) {
  const rows = JSON.parse(readFileSync(join(data, file), 'utf8'));
  return Object.fromEntries(columns.map((c) => [c, rows.map((r) => (typeof r[c] === 'string' && r[c] !== '' ? r[c] : null))]));
}

// Text columns of a CSV (row-aligned), for groups.
function textFromCsv(file, columns) {
  const rows = parse(readFileSync(join(data, file), 'utf8'), { columns: true });
  return Object.fromEntries(columns.map((c) => [c, rows.map((r) => (r[c] === '' ? null : r[c]))]));
}

const datasets = [
  {
    id: 'seattle',
    label: 'Seattle weather 2012–2015 (daily)',
    source: 'vega-datasets seattle-weather.csv',
    columns: fromCsv('seattle-weather.csv', ['precipitation', 'temp_max', 'temp_min', 'wind']),
    // Columns to group by, with their public keys: the categories the
    // dataset documents, not read off the rows.
    groups: textFromCsv('seattle-weather.csv', ['weather']),
    keys: { weather: ['drizzle', 'fog', 'rain', 'snow', 'sun'] },
    // Public bounds and resolution from what the quantity can be, never from
    // the data: the page fills them in and says why.
    about: {
      precipitation: { unit: 'mm per day', lower: 0, upper: 60, step: 0.1, why: 'rain cannot be negative; a wet day in Seattle rarely brings more than 60 mm; recorded to 0.1 mm' },
      temp_max: { unit: '°C', lower: -20, upper: 50, step: 0.1, why: 'a range that holds any day in a temperate city; recorded to 0.1 °C' },
      temp_min: { unit: '°C', lower: -30, upper: 40, step: 0.1, why: 'a range that holds any night in a temperate city; recorded to 0.1 °C' },
      wind: { unit: 'm/s', lower: 0, upper: 20, step: 0.1, why: 'daily mean wind speed, 0 to gale force; recorded to 0.1 m/s' },
    },
  },
  {
    id: 'flights',
    label: 'US flights, 20,000 departures',
    source: 'vega-datasets flights-20k.json',
    columns: fromJson('flights-20k.json', ['delay', 'distance']),
    about: {
      delay: { unit: 'minutes', lower: -60, upper: 600, step: 1, why: 'departures up to an hour early or ten hours late; whole minutes' },
      distance: { unit: 'miles', lower: 0, upper: 5000, step: 1, why: 'US domestic flights are under 5,000 miles; whole miles' },
    },
  },
  {
    id: 'movies',
    label: 'Movies (IMDB and Rotten Tomatoes)',
    source: 'vega-datasets movies.json',
    columns: fromJson('movies.json', ['IMDB Rating', 'Rotten Tomatoes Rating', 'Running Time min']),
    // Directors make several films: protecting a director, not a film, is
    // the per-person guarantee.
    people: textFromJson('movies.json', ['Director']),
    groups: textFromJson('movies.json', ['Major Genre']),
    about: {
      'IMDB Rating': { unit: 'points out of 10', lower: 0, upper: 10, step: 0.1, why: 'the rating scale; one decimal' },
      'Rotten Tomatoes Rating': { unit: '% of positive reviews', lower: 0, upper: 100, step: 1, why: 'a percentage; whole numbers' },
      'Running Time min': { unit: 'minutes', lower: 0, upper: 300, step: 1, why: 'feature films run well under five hours; whole minutes' },
    },
  },
  {
    id: 'penguins',
    label: 'Palmer penguins, by species',
    source: 'vega-datasets penguins.json',
    columns: fromJson('penguins.json', ['Body Mass (g)', 'Flipper Length (mm)', 'Beak Length (mm)']),
    groups: textFromJson('penguins.json', ['Species', 'Island']),
    keys: { Species: ['Adelie', 'Chinstrap', 'Gentoo'], Island: ['Biscoe', 'Dream', 'Torgersen'] },
    // Opens grouped: a breakdown by species.
    groupBy: 'Species',
    about: {
      'Body Mass (g)': { unit: 'grams', lower: 0, upper: 10000, step: 25, why: 'adult penguins of these species weigh under 10 kg; weighed to 25 g' },
      'Flipper Length (mm)': { unit: 'mm', lower: 0, upper: 300, step: 1, why: 'flippers of these species are under 30 cm; whole millimetres' },
      'Beak Length (mm)': { unit: 'mm', lower: 0, upper: 100, step: 0.1, why: 'beaks under 10 cm; measured to 0.1 mm' },
    },
  },
];

const out = join(root, 'web/site/generated');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'datasets.json'), JSON.stringify(datasets));
// The page lists the datasets; only the worker holds their values.
writeFileSync(
  join(out, 'dataset-list.json'),
  JSON.stringify(datasets.map(({ id, label, about, groupBy }) => ({ id, label, about, ...(groupBy === undefined ? {} : { groupBy }) }))),
);
console.log(`datasets: ${datasets.map((d) => d.id).join(', ')}`);
