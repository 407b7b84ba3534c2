// One part of a large CSV, sketched on its own core: the demo's worker hands
// each sketch worker a byte range that starts and ends at record boundaries,
// and merges the sketches they send back (stream.merge). Only a sketch leaves
// this worker, and only to the demo's worker: never the page.
import { loadDpQuantiles } from '../../dist/browser.js';
import { parseChunk } from './csv-chunk.js';

export interface SketchPart {
  file: File;
  /** Byte range [start, end) of whole records; the header is not in it. */
  start: number;
  end: number;
  column: number;
  delimiter: string;
  lower: number;
  upper: number;
  alpha: number;
}

export type SketchReply =
  | { type: 'progress'; bytes: number }
  | { type: 'sketch'; bytes: Uint8Array; values: number }
  | { type: 'error'; message: string };

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function post(reply: SketchReply): void {
  (self as unknown as Worker).postMessage(reply);
}

self.onmessage = async (event: MessageEvent<SketchPart>) => {
  const part = event.data;
  try {
    const dpq = await loadDpQuantiles();
    const stream = dpq.createStream({ lower: part.lower, upper: part.upper, alpha: part.alpha });
    try {
      const batch = new Float64Array(1 << 16);
      let filled = 0;
      const take = (text: string) => {
        const rows = parseChunk(text, part.delimiter);
        for (const row of rows) {
          const cell = (row[part.column] ?? '').trim();
          if (!NUMBER.test(cell)) continue; // not a number: left out, as listed
          batch[filled++] = Number(cell);
          if (filled === batch.length) {
            stream.push(batch);
            filled = 0;
          }
        }
      };
      // No quoted field spans lines here (the demo's worker checked), so the
      // last newline of a chunk ends its last complete record.
      const reader = part.file.slice(part.start, part.end).stream().pipeThrough(new TextDecoderStream()).getReader();
      let carry = '';
      let bytes = 0;
      let reported = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.length;
        const text = carry + value;
        const end = text.lastIndexOf('\n');
        if (end < 0) {
          carry = text;
        } else {
          take(text.slice(0, end));
          carry = text.slice(end + 1);
        }
        if (bytes - reported > 1 << 20) {
          post({ type: 'progress', bytes: bytes - reported });
          reported = bytes;
        }
      }
      if (carry.trim() !== '') take(carry);
      stream.push(batch.subarray(0, filled));
      post({ type: 'progress', bytes: bytes - reported });
      const sketch = stream.serialize();
      (self as unknown as Worker).postMessage({ type: 'sketch', bytes: sketch, values: stream.count } satisfies SketchReply, [sketch.buffer]);
    } finally {
      stream.dispose();
    }
  } catch (error) {
    post({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  }
};
