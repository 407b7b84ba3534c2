// Shared exports of both entry points (node.ts and browser.ts).
export { DpQuantilesError } from './errors.js';
export type { DpQuantilesErrorCode } from './errors.js';
export type {
  AggTreeOptions,
  AppIndExpOptions,
  AqOptions,
  AutoOptions,
  BaseQuantilesOptions,
  BoundsOptions,
  BoundsRelease,
  ConfidenceIntervals,
  Budget,
  CountsData,
  CountsOptions,
  DpQuantiles,
  HsJointExpOptions,
  InverseSensitivityOptions,
  JointExpOptions,
  NumericData,
  PerPersonOptions,
  PrivacySession,
  PrivacySpent,
  QuantileMethod,
  QuantilesOptions,
  QuantilesRelease,
  SanitizeOptions,
  SanitizeShape,
  SessionBudget,
  SessionOptions,
  TreeCdfOptions,
} from './api.js';
export type {
  QuantileStream,
  StreamOptions,
  StreamQuantilesOptions,
  StreamQuantilesShape,
  StreamRelease,
} from './stream.js';
