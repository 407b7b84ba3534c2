// Adds up the GoogleTest and Vitest JSON reports into one closing line.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
let passed = 0;
let failed = 0;
// The sanitizer run is sharded in two.
for (const name of [
  'gtest-native.json',
  'gtest-wasm.json',
  'gtest-sanitize-0.json',
  'gtest-sanitize-1.json',
]) {
  const path = join(dir, name);
  if (!existsSync(path)) {
    console.log(`missing report: ${name}`);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(path, 'utf8'));
  passed += report.tests - report.failures - (report.disabled ?? 0);
  failed += report.failures;
}
const vitest = join(dir, 'vitest.json');
if (existsSync(vitest)) {
  const report = JSON.parse(readFileSync(vitest, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
} else {
  console.log('missing report: vitest.json');
  failed += 1;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
