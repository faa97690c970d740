/** A plain-text table for a person: columns padded to their widest cell (capped), long cells cut with `…`. */
export function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>, max = 60): string {
  const cut = (s: string) => {
    const one = s.replace(/\s+/g, ' ').trim();
    return one.length > max ? `${one.slice(0, max - 1)}…` : one;
  };
  const cells = [head, ...rows].map((r) => r.map(cut));
  const widths = head.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
