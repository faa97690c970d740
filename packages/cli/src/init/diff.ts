/** The lines of a text, without their line ends and without the empty one after a final newline. */
export function lines(text: string): string[] {
  const all = text.replace(/\r\n/g, '\n').split('\n');
  if (all[all.length - 1] === '') all.pop();
  return all;
}

/** A unified diff of one file (3 lines of context), for the terminal: `--- file`, `+++ file`, hunks. */
export function unifiedDiff(name: string, before: string | undefined, after: string | undefined): string[] {
  const a = before === undefined ? [] : lines(before);
  const b = after === undefined ? [] : lines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  const ops: Array<[' ' | '-' | '+', string]> = a.slice(0, head).map((l) => [' ', l] as [' ', string]);
  if (am.length * bm.length > 4_000_000) {
    for (const l of am) ops.push(['-', l]);
    for (const l of bm) ops.push(['+', l]);
  } else {
    // Longest common subsequence of the changed middle; configs are small.
    const w = bm.length + 1;
    const lcs = new Uint32Array((am.length + 1) * w);
    for (let i = am.length - 1; i >= 0; i--) {
      for (let j = bm.length - 1; j >= 0; j--) {
        lcs[i * w + j] =
          am[i] === bm[j]
            ? (lcs[(i + 1) * w + j + 1] as number) + 1
            : Math.max(lcs[(i + 1) * w + j] as number, lcs[i * w + j + 1] as number);
      }
    }
    let i = 0;
    let j = 0;
    while (i < am.length || j < bm.length) {
      if (i < am.length && j < bm.length && am[i] === bm[j]) {
        ops.push([' ', am[i++] as string]);
        j++;
      } else if (
        i < am.length &&
        (j === bm.length || (lcs[(i + 1) * w + j] as number) >= (lcs[i * w + j + 1] as number))
      ) {
        // A removed line before the added one that replaces it, as diff(1) prints them.
        ops.push(['-', am[i++] as string]);
      } else ops.push(['+', bm[j++] as string]);
    }
  }
  for (const l of a.slice(a.length - tail)) ops.push([' ', l]);

  const out = [`--- ${before === undefined ? '/dev/null' : name}`, `+++ ${after === undefined ? '/dev/null' : name}`];
  const CONTEXT = 3;
  const changed = ops.flatMap((op, k) => (op[0] === ' ' ? [] : [k]));
  let k = 0;
  while (k < changed.length) {
    let end = k;
    while (end + 1 < changed.length && (changed[end + 1] as number) - (changed[end] as number) <= 2 * CONTEXT) end++;
    const from = Math.max(0, (changed[k] as number) - CONTEXT);
    const to = Math.min(ops.length, (changed[end] as number) + CONTEXT + 1);
    const before = ops.slice(0, from);
    const hunk = ops.slice(from, to);
    const oldStart = before.filter((o) => o[0] !== '+').length;
    const newStart = before.filter((o) => o[0] !== '-').length;
    const oldLen = hunk.filter((o) => o[0] !== '+').length;
    const newLen = hunk.filter((o) => o[0] !== '-').length;
    out.push(`@@ -${oldLen ? oldStart + 1 : oldStart},${oldLen} +${newLen ? newStart + 1 : newStart},${newLen} @@`);
    for (const [mark, l] of hunk) out.push(`${mark}${l}`);
    k = end + 1;
  }
  return out;
}
