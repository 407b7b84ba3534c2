// Shared exports of both entry points (node.ts and browser.ts).
export { DpQuantilesError } from './errors.js';
export type { DpQuantilesErrorCode } from './errors.js';
export type {
  AggTreeOptions,
  AppIndExpOptions,
  AqOptions,
  BaseQuantilesOptions,
  DpQuantiles,
  HsJointExpOptions,
  InverseSensitivityOptions,
  JointExpOptions,
  PrivacySpent,
  QuantileMethod,
  QuantilesOptions,
  QuantilesRelease,
  SanitizeOptions,
  TreeCdfOptions,
} from './api.js';
export type { QuantileStream, StreamOptions, StreamQuantilesOptions, StreamRelease } from './stream.js';
