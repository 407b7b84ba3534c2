// What every part of the demo page shares: its element lookup and the way it
// writes numbers and budgets.
// One notation on this page, the one its budget field uses: ε, ρ and δ. The
// library says epsilon, rho and delta (its options' names); its messages and
// privacy records are shown in the page's letters.
export const GREEK: Record<string, string> = { epsilon: 'ε', rho: 'ρ', delta: 'δ' };

export function greek(text: string): string {
  return text.replace(/\b(epsilon|rho|delta)\b/g, (name) => GREEK[name]);
}

// A privacy record or budget ({ kind, epsilon, delta } ...) as 'ε = 1, δ = 1e-6'
// (a zero δ left out; tiny amounts in exponent form).
export function budgetText(budget: Record<string, number | string>): string {
  return Object.entries(budget)
    .filter(([key, value]) => key in GREEK && !(key === 'delta' && value === 0))
    .map(([key, value]) => {
      const amount = Number(value);
      // As the library's messages and JSON write numbers (JavaScript's
      // String): δ = 0.000001 here and there alike.
      return `${GREEK[key]} = ${String(Number(amount.toPrecision(4)))}`;
    })
    .join(', ');
}

export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export function format(x: number): string {
  return Number.isFinite(x) ? x.toPrecision(6).replace(/\.?0+$/, '') : '—';
}
