import type { Runner } from '../sync/list.js';
import { configObjects, members, type Prop, read, type Source, type Token, valueKind, valueText } from './lexer.js';
import { REPORTER, TARGETS } from './runners.js';

/**
 * The edit of a JS/TS config as text: one insertion or one replaced literal, in the file's own line ends, indent and
 * quotes, so the user's formatting and comments stay; or, when the edit cannot be made for certain, why not.
 */

interface Edit {
  at: number;
  /** Characters replaced from `at` (0: an insertion). */
  remove?: number;
  text: string;
}

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

function styleOf(s: Source): Style {
  const eol = s.src.includes('\r\n') ? '\r\n' : '\n';
  let unit = '  ';
  if (/^\t+\S/m.test(s.src)) unit = '\t';
  else {
    const widths = [...s.src.matchAll(/^( +)\S/gm)].map((m) => (m[1] as string).length).filter((n) => n >= 2);
    if (widths.length > 0) unit = ' '.repeat(Math.min(...widths, 8));
  }
  const strings = s.tokens.filter((t) => t.kind === 'string');
  const doubles = strings.filter((t) => t.text.startsWith('"')).length;
  return { eol, unit, q: doubles > strings.length - doubles ? '"' : "'" };
}

/** The white space the line holding `pos` starts with. */
function indentAt(src: string, pos: number): string {
  const lineStart = src.lastIndexOf('\n', pos - 1) + 1;
  return /^[ \t]*/.exec(src.slice(lineStart))?.[0] ?? '';
}

/** Inserts `member` as the first member of the object at `open`: its own line in a multi-line object. */
function insertMember(s: Source, open: number, member: string, style: Style): Edit {
  const o = s.tokens[open] as Token;
  const close = s.partner[open] as number;
  const next = s.tokens[open + 1] as Token;
  const gap = s.src.slice(o.end, next.start);
  if (!gap.includes('\n'))
    return close === open + 1 ? { at: o.end, text: ` ${member} ` } : { at: o.end, text: ` ${member},` };
  if (close === open + 1)
    return { at: o.end, text: `${style.eol}${indentAt(s.src, next.start)}${style.unit}${member},` };
  // After the `{` line (and a comment on it), before any comment that belongs to the first member.
  return { at: s.src.indexOf('\n', o.end) + 1, text: `${indentAt(s.src, next.start)}${member},${style.eol}` };
}

/** Appends `item` to the array (or object) literal at `open`, in its layout (one item a line or all on one). */
function appendItem(s: Source, open: number, item: string, style: Style): Edit {
  const o = s.tokens[open] as Token;
  const close = s.partner[open] as number;
  if (close === open + 1) return { at: o.end, remove: (s.tokens[close] as Token).start - o.end, text: item };
  const first = s.tokens[open + 1] as Token;
  const last = s.tokens[close - 1] as Token;
  const trailingComma = last.text === ',';
  if (s.src.slice(o.end, first.start).includes('\n')) {
    const indent = indentAt(s.src, first.start);
    return { at: last.end, text: trailingComma ? `${style.eol}${indent}${item},` : `,${style.eol}${indent}${item}` };
  }
  return { at: last.end, text: trailingComma ? ` ${item}` : `, ${item}` };
}

/** An expression shortened to one line for a message. */
export const brief = (text: string) => {
  const line = text.replace(/\s+/g, ' ');
  return line.length > 70 ? `${line.slice(0, 67)}...` : line;
};

/**
 * Where the reporters are in a parsed config: the object that holds the last key of the target's path, and that
 * key's member when present; or why it cannot be told.
 */
function locate(
  s: Source,
  runner: Runner,
): { holder: number; missing: string[]; prop?: Prop; last?: boolean } | { why: string } {
  const target = TARGETS[runner];
  let candidates = configObjects(s);
  if (candidates.length > 1) {
    // Several objects (a base config beside the exported one, `mergeConfig(base, defineConfig({ test }))`): the one
    // that holds the option is the config; when none or several do, it is not guessed.
    const holding = candidates.filter((c) => members(s, c).some((m) => m.key === target.path[0]));
    candidates = holding.length > 0 ? holding : candidates;
  }
  if (candidates.length === 0) {
    return {
      why: 'no config object was found (`export default defineConfig({ ... })`, `export default { ... }` or `module.exports = { ... }`); a config made by a function or imported from elsewhere is not edited',
    };
  }
  if (candidates.length > 1) return { why: 'it holds more than one config object and it is not clear which is used' };
  let holder = candidates[0] as number;
  for (let depth = 0; depth < target.path.length; depth++) {
    const key = target.path[depth] as string;
    const all = members(s, holder);
    const prop = all.find((m) => m.kind === 'prop' && m.key === key);
    if (!prop) {
      const others = all.filter((m) => m.kind !== 'prop');
      // Vitest's own defaults hold `reporters: []`: after them, the option is ours to set.
      if (others.length > 0 && others.every((m) => m.kind === 'spread' && valueText(s, m) === 'configDefaults')) {
        return { holder, missing: target.path.slice(depth), last: true };
      }
      if (others.length > 0) {
        return {
          why: `it has no \`${key}\` option of its own but a spread (\`...\`) or method that may set it; casebridge does not guess which one wins`,
        };
      }
      return { holder, missing: target.path.slice(depth) };
    }
    if (depth === target.path.length - 1) return { holder, missing: [], prop };
    if (valueKind(s, prop) !== 'object') {
      return { why: `its \`${key}\` option is not an object literal (\`${brief(valueText(s, prop))}\`)` };
    }
    holder = prop.from;
  }
  return { why: 'unreachable' };
}

/** The edit that adds the reporter to a JS/TS config's text, or why it cannot be made safely. */
export function editScript(
  src: string,
  runner: Runner,
  viteFile: boolean,
): { after: string; what: string } | { why: string } {
  const s = read(src);
  if (!s) return { why: 'casebridge could not read it (a string, comment or bracket that does not close)' };
  const target = TARGETS[runner];
  const style = styleOf(s);
  const found = locate(s, runner);
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
    edits.push(found.last ? appendItem(s, found.holder, member, style) : insertMember(s, found.holder, member, style));
    what = `added the ${option} option with ${brief(target.fresh(style.q))}`;
    // A vite.config.ts typed by Vite's own defineConfig does not know `test`; this line teaches it (Vitest's docs).
    if (viteFile && first === 'test' && !/reference\s+types=["']vitest/.test(src) && /from\s+["']vite["']/.test(src)) {
      edits.push({ at: 0, text: `/// <reference types="vitest/config" />${style.eol}` });
      what += ' (and the vitest/config types reference Vite configs need for it)';
    }
  } else {
    const prop = found.prop as Prop;
    const kind = valueKind(s, prop);
    if (kind === 'array') {
      edits.push(appendItem(s, prop.from, target.item(style.q), style));
      what = `appended ${target.item(style.q)} to ${option}`;
    } else if (kind === 'string' && target.fromString) {
      const t = s.tokens[prop.from] as Token;
      edits.push({ at: t.start, remove: t.end - t.start, text: target.fromString(t.text, style.q) });
      what = `made ${option} ${t.text} a list with ${target.item(style.q)} added`;
    } else {
      const text = brief(valueText(s, prop));
      const how =
        kind === 'string'
          ? `a string, not a list (\`${text}\`)`
          : prop.to - prop.from === 1 && s.tokens[prop.from]?.kind === 'word'
            ? `the variable \`${text}\`, set elsewhere`
            : `computed (\`${text}\`)`;
      return { why: `its \`${option}\` option is ${how}` };
    }
  }
  const after = applyEdits(src, edits);
  // Re-read what was made: it must pair its brackets and name the reporter where the runner looks for it.
  const check = read(after);
  const again = check && locate(check, runner);
  if (!check || !again || 'why' in again || !again.prop || !valueText(check, again.prop).includes(REPORTER[runner])) {
    return {
      why: 'the edited text did not check out (casebridge did not recognise its own edit); nothing was written',
    };
  }
  return { after, what };
}
