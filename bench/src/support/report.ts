/** Small numeric and printing helpers shared by the benches. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile (p in 0..100) of unsorted values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function fixed(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export type Align = 'left' | 'right';

/** A plain-text table: a header row, a rule, the rows. Numbers are usually right-aligned. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], align?: readonly Align[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const cell = (text: string, i: number) => {
    const width = widths[i]!;
    return (align?.[i] ?? (i === 0 ? 'left' : 'right')) === 'left' ? text.padEnd(width) : text.padStart(width);
  };
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => cell(c, i)).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => ((align?.[i] ?? (i === 0 ? 'left' : 'right')) === 'left' ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}

export function heading(title: string): void {
  console.log(`\n=== ${title} ${'='.repeat(Math.max(3, 76 - title.length))}\n`);
}

export function verdict(pass: boolean): string {
  return pass ? 'PASS' : 'FAIL';
}
