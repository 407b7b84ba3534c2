// The demo's reader of large CSVs' chunks: split by hand where no quote
// is, it must read every chunk as csv-parse does.
import { parse as parseSync } from 'csv-parse/sync';
import { expect, it } from 'vitest';

import { parseChunk } from '../../web/site/csv-chunk.js';

it('reads chunks of records as csv-parse does, quoted or not', () => {
  const chunks = [
    'id,value\n1,2.5\n2,3\n',
    'id,value\r\n1,2.5\r\n\r\n2,3',
    '1, 2.5 ,x\n\n3\n4,,\n',
    '\uFEFFid,value\n1,2',
    'a;b;c\n1;2,5;3\n',
    'a,"b, c",d\n"x\ny",2,"q ""quoted"""\n',
  ];
  for (const text of chunks) {
    const delimiter = text.includes(';') ? ';' : ',';
    const expected = parseSync(text, { relax_column_count: true, skip_empty_lines: true, bom: true, delimiter });
    expect(parseChunk(text, delimiter), JSON.stringify(text)).toEqual(expected);
  }
});
