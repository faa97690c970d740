import type { ArrayExpression, ObjectExpression } from '@babel/types';
import type { Runner } from '../sync/list.js';
import {
  configObjects,
  endOf,
  type Member,
  members,
  namesInCode,
  type Parsed,
  parseConfig,
  startOf,
  textOf,
  unwrap,
  valueKind,
  valueText,
  walk,
} from './parse.js';
import { REPORTER, TARGETS } from './runners.js';

/**
 * The edit of a JS/TS config as text: the parser (parse.ts) says where the config object and its reporter option
 * are, and the edit is one insertion or one replaced literal spliced in at those offsets, in the file's own line ends,
 * indent and quotes, so every byte it does not add stays; or, when the edit cannot be made for certain, why not.
 */

interface Edit {
  at: number;
  /** Characters replaced from `at` (0: an insertion). */
  remove?: number;
  text: string;
}

/** The edits, from the last to the first, so that each one's offsets still hold; none share an offset. */
function applyEdits(src: string, edits: Edit[]): string {
  let out = src;
  for (const e of [...edits].sort((a, b) => b.at - a.at)) {
    out = out.slice(0, e.at) + e.text + out.slice(e.at + (e.remove ?? 0));
  }
  return out;
}

/** The file's own ways: end of line, indent unit, quote. */
interface Style {
  eol: string;
  unit: string;
  q: string;
}

function styleOf(p: Parsed): Style {
  const eol = p.src.includes('\r\n') ? '\r\n' : '\n';
  let unit = '  ';
  if (/^\t+\S/m.test(p.code)) unit = '\t';
  else {
    const widths = [...p.code.matchAll(/^( +)\S/gm)].map((m) => (m[1] as string).length).filter((n) => n >= 2);
    if (widths.length > 0) unit = ' '.repeat(Math.min(...widths, 8));
  }
  let singles = 0;
  let doubles = 0;
  for (const n of walk(p.ast.program)) {
    const raw = n.type === 'StringLiteral' ? (n.extra?.raw as string | undefined) : undefined;
    if (raw?.startsWith('"')) doubles++;
    else if (raw?.startsWith("'")) singles++;
  }
  return { eol, unit, q: doubles > singles ? '"' : "'" };
}

/** The white space the line holding `pos` starts with. */
function indentAt(src: string, pos: number): string {
  const lineStart = src.lastIndexOf('\n', pos - 1) + 1;
  return /^[ \t]*/.exec(src.slice(lineStart))?.[0] ?? '';
}

/** The offset of the first character of code (not space, not comment) from `from`. */
function codeFrom(p: Parsed, from: number): number {
  const i = p.code.slice(from).search(/\S/);
  return i < 0 ? p.code.length : from + i;
}

/** The offset just after the last character of code before `to`. */
function codeEndBefore(p: Parsed, to: number): number {
  return p.code.slice(0, to).trimEnd().length;
}

/** Whether `pos` lies inside a comment (where an insertion would be commented out). */
const inComment = (p: Parsed, pos: number) =>
  (p.ast.comments ?? []).some((c) => (c.start ?? 0) < pos && pos < (c.end ?? 0));

/** The end of the line holding `pos` (before its `\r\n` or `\n`), when that comes before `limit`; else `pos`. */
function lineEnd(p: Parsed, pos: number, limit: number): number {
  const nl = p.src.indexOf('\n', pos);
  if (nl < 0 || nl >= limit) return pos;
  const end = p.src[nl - 1] === '\r' ? nl - 1 : nl;
  return inComment(p, end) ? pos : end;
}

/** Inserts `member` as the first member of the object literal `o`: its own line in a multi-line object. */
function insertMember(p: Parsed, o: ObjectExpression, member: string, style: Style): Edit {
  const open = startOf(o) + 1;
  const close = endOf(o) - 1;
  const first = codeFrom(p, open);
  const inner = p.src.slice(open, close);
  if (!p.src.slice(open, first).includes('\n')) {
    if (first < close) return { at: open, text: ` ${member},` };
    return /^\s*$/.test(inner)
      ? { at: open, remove: inner.length, text: ` ${member} ` }
      : { at: open, text: ` ${member}` };
  }
  if (first === close) return { at: open, text: `${style.eol}${indentAt(p.src, close)}${style.unit}${member},` };
  // After the `{` line (and a comment on it), before any comment that belongs to the first member.
  const at = p.src.indexOf('\n', open) + 1;
  if (inComment(p, at)) return { at: first, text: `${member},${style.eol}${indentAt(p.src, first)}` };
  return { at, text: `${indentAt(p.src, first)}${member},${style.eol}` };
}

/**
 * Appends `item` to the array (or object) literal `a`, in its layout: one item a line (after a comment that ends
 * the last item's line, trailing comma kept or not) or all on one line.
 */
function appendItem(p: Parsed, a: ArrayExpression | ObjectExpression, item: string, style: Style): Edit[] {
  const open = startOf(a) + 1;
  const close = endOf(a) - 1;
  const first = codeFrom(p, open);
  if (first >= close) {
    const inner = p.src.slice(open, close);
    return [/^\s*$/.test(inner) ? { at: open, remove: inner.length, text: item } : { at: open, text: item }];
  }
  const last = codeEndBefore(p, close);
  const trailingComma = p.code[last - 1] === ',';
  if (!p.src.slice(open, first).includes('\n')) return [{ at: last, text: trailingComma ? ` ${item}` : `, ${item}` }];
  const indent = indentAt(p.src, first);
  const end = lineEnd(p, last, close);
  if (trailingComma) return [{ at: end, text: `${style.eol}${indent}${item},` }];
  if (end === last) return [{ at: last, text: `,${style.eol}${indent}${item}` }];
  return [
    { at: last, text: ',' },
    { at: end, text: `${style.eol}${indent}${item}` },
  ];
}

/** An expression shortened to one line for a message. */
export const brief = (text: string) => {
  const line = text.replace(/\s+/g, ' ');
  return line.length > 70 ? `${line.slice(0, 67)}...` : line;
};

type Located = { holder: ObjectExpression; missing: string[]; prop?: Member; last?: boolean } | { why: string };

/**
 * Where the reporters are in a parsed config: the object that holds the last key of the target's path, and that
 * key's member when present; or why it cannot be told.
 */
function locate(p: Parsed, runner: Runner): Located {
  const target = TARGETS[runner];
  let candidates = configObjects(p);
  if (candidates.length > 1) {
    // Several objects (a base config beside the exported one, `mergeConfig(base, defineConfig({ test }))`): the one
    // that holds the option is the config; when none or several do, it is not guessed.
    const holding = candidates.filter((c) => members(c).some((m) => m.key === target.path[0]));
    candidates = holding.length > 0 ? holding : candidates;
  }
  if (candidates.length === 0) {
    return {
      why: 'no config object was found (`export default defineConfig({ ... })`, `export default { ... }` or `module.exports = { ... }`); a config made by a function or imported from elsewhere is not edited',
    };
  }
  if (candidates.length > 1) return { why: 'it holds more than one config object and it is not clear which is used' };
  let holder = candidates[0] as ObjectExpression;
  for (let depth = 0; depth < target.path.length; depth++) {
    const key = target.path[depth] as string;
    const all = members(holder);
    // The last one wins, as in the runner.
    const prop = all.findLast((m) => m.kind === 'prop' && m.key === key);
    if (!prop) {
      const others = all.filter((m) => m.kind !== 'prop');
      // Vitest's own defaults hold `reporters: []`: after them, the option is ours to set.
      if (
        others.length > 0 &&
        others.every((m) => m.kind === 'spread' && m.value?.type === 'Identifier' && m.value.name === 'configDefaults')
      ) {
        return { holder, missing: target.path.slice(depth), last: true };
      }
      if (others.length > 0) {
        return {
          why: `it has no \`${key}\` option of its own but a spread (\`...\`) or computed key that may set it; casebridge does not guess which one wins`,
        };
      }
      return { holder, missing: target.path.slice(depth) };
    }
    if (depth === target.path.length - 1) return { holder, missing: [], prop };
    if (valueKind(prop) !== 'object') {
      return { why: `its \`${key}\` option is not an object literal (\`${brief(valueText(p, prop))}\`)` };
    }
    holder = unwrap(prop.value as ObjectExpression) as ObjectExpression;
  }
  return { why: 'unreachable' };
}

/**
 * The edit that adds the reporter to a JS/TS config's text; `present` when a string in its code already names the
 * reporter (running init twice changes nothing); or why it cannot be made safely.
 */
export async function editScript(
  src: string,
  runner: Runner,
  viteFile: boolean,
): Promise<{ after: string; what: string } | { present: true } | { why: string }> {
  const p = await parseConfig(src);
  if ('why' in p) return p;
  if (namesInCode(p, REPORTER[runner])) return { present: true };
  const target = TARGETS[runner];
  const style = styleOf(p);
  const found = locate(p, runner);
  if ('why' in found) return found;
  const edits: Edit[] = [];
  let what: string;
  const option = target.path.join('.');
  if (found.missing.length > 0) {
    // The missing keys nest: `test: { reporters: [...] }` when the test block itself is missing.
    const [first, ...rest] = found.missing;
    let value = target.fresh(style.q);
    for (const key of [...rest].reverse()) value = `{ ${key}: ${value} }`;
    const member = `${first}: ${value}`;
    // First, so that it reads as the config's own; last when a spread before it would otherwise replace it.
    edits.push(
      ...(found.last ? appendItem(p, found.holder, member, style) : [insertMember(p, found.holder, member, style)]),
    );
    what = `added the ${option} option with ${brief(target.fresh(style.q))}`;
    // A vite.config.ts typed by Vite's own defineConfig does not know `test`; this line teaches it (Vitest's docs).
    const fromVite = p.ast.program.body.some((s) => s.type === 'ImportDeclaration' && s.source.value === 'vite');
    if (viteFile && first === 'test' && fromVite && !/reference\s+types=["']vitest/.test(src)) {
      edits.push({ at: 0, text: `/// <reference types="vitest/config" />${style.eol}` });
      what += ' (and the vitest/config types reference Vite configs need for it)';
    }
  } else {
    const prop = found.prop as Member;
    const kind = valueKind(prop);
    const value = prop.value && unwrap(prop.value);
    if (kind === 'array' && value?.type === 'ArrayExpression') {
      edits.push(...appendItem(p, value, target.item(style.q), style));
      what = `appended ${target.item(style.q)} to ${option}`;
    } else if (kind === 'string' && value && target.fromString) {
      const text = textOf(p, value);
      edits.push({ at: startOf(value), remove: text.length, text: target.fromString(text, style.q) });
      what = `made ${option} ${text} a list with ${target.item(style.q)} added`;
    } else {
      const text = brief(valueText(p, prop));
      const how =
        kind === 'string'
          ? `a string, not a list (\`${text}\`)`
          : kind === 'variable'
            ? `the variable \`${text}\`, set elsewhere`
            : `computed (\`${text}\`)`;
      return { why: `its \`${option}\` option is ${how}` };
    }
  }
  const after = applyEdits(src, edits);
  // Parse what was made: it must still be valid and name the reporter where the runner looks for it.
  const check = await parseConfig(after);
  const again = 'why' in check ? undefined : locate(check, runner);
  if (!again || 'why' in again || !again.prop || !valueText(check as Parsed, again.prop).includes(REPORTER[runner])) {
    return {
      why: 'the edited text did not check out (casebridge did not recognise its own edit); nothing was written',
    };
  }
  return { after, what };
}
