// Shared exports of both entry points (node.ts and browser.ts).
export { DpQuantilesError } from './errors.js';
export type { DpQuantilesErrorCode } from './errors.js';
export type {
  DpQuantiles,
  PrivacySpent,
  QuantileMethod,
  QuantilesOptions,
  QuantilesRelease,
} from './api.js';
