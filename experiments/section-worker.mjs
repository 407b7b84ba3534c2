// A worker thread of run.mjs: loads the package once, then computes the
// section-1 rows of each (dataset, budget) task it is sent.
import { parentPort, workerData } from 'node:worker_threads';

import { loadDpQuantiles } from '../dist/node.js';
import { BUDGETS, datasets, sectionRows } from './section.mjs';

const dpq = await loadDpQuantiles();
const list = datasets(workerData.only);
parentPort.on('message', ({ dataset, budget }) => {
  const started = Date.now();
  const rows = sectionRows(dpq, list[dataset], BUDGETS[budget], workerData.trials);
  parentPort.postMessage({ dataset, budget, rows, seconds: (Date.now() - started) / 1000 });
});
