// The CLI's usage errors and the parsing of its flags' values.
import type { SessionOptions } from './node.js';

export class UsageError extends Error {}

// A whole decimal number: no empty cells, hex or trailing text.
export const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
// A number written with a decimal comma (3,5), for the hint to --decimal-comma.
export const COMMA_DECIMAL = /^[+-]?\d+,\d+$/;

export function parseNumberOption(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  // 'Infinity' and '1e400' alike: both are not a finite number.
  const value = Number(text);
  if (!NUMBER.test(text.trim()) || !Number.isFinite(value)) {
    throw new UsageError(`--${name} must be a finite number, got '${text}'`);
  }
  return value;
}

// "epsilon=3", "rho=1" or "epsilon=3,delta=1e-6": a session's total.
export function parseBudget(text: string, flag = 'budget'): SessionOptions {
  const parts: Record<string, number> = {};
  for (const part of text.split(',')) {
    const at = part.indexOf('=');
    const name = part.slice(0, at).trim();
    if (at <= 0 || !['epsilon', 'rho', 'delta'].includes(name)) {
      throw new UsageError(`--${flag} takes epsilon=E, rho=R or epsilon=E,delta=D, got '${text}'`);
    }
    parts[name] = parseNumberOption(flag, part.slice(at + 1)) as number;
  }
  return parts as unknown as SessionOptions;
}
