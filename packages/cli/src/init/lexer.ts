/**
 * A lexer just good enough for config files: it knows where strings, comments, template literals and regular
 * expressions start and end, so that a brace in `// dotenv.config({ path })` or a `/` in `testMatch: /.*\.e2e\.ts/`
 * is not taken for structure. On its tokens: the config object of a file and the members of an object literal.
 */

export interface Token {
  kind: 'punct' | 'op' | 'string' | 'template' | 'regex' | 'word' | 'other';
  start: number;
  end: number;
  text: string;
}

const WORD_CHAR = /[\w$\u0080-\uffff]/;
const OP_CHARS = '=<>!&|?+-*%^~';
/** After these words a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw']);

function regexMayStart(prev: Token | undefined): boolean {
  if (!prev) return true;
  if (prev.kind === 'op') return true;
  if (prev.kind === 'punct') return '([{,;:}'.includes(prev.text);
  return prev.kind === 'word' && BEFORE_REGEX.has(prev.text);
}

/**
 * The tokens of `src` from `from`; with `nested` (the inside of a template's `${`), up to the `}` that closes it.
 * Undefined when a string, comment, template or regular expression does not end.
 */
function lex(src: string, from = 0, nested = false): { tokens: Token[]; end: number } | undefined {
  const tokens: Token[] = [];
  let depth = 0;
  let i = from;
  const push = (kind: Token['kind'], start: number) => tokens.push({ kind, start, end: i, text: src.slice(start, i) });
  while (i < src.length) {
    const c = src[i] as string;
    const start = i;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '/' && src[i + 1] === '/') {
      const nl = src.indexOf('\n', i);
      i = nl < 0 ? src.length : nl;
    } else if (c === '/' && src[i + 1] === '*') {
      const close = src.indexOf('*/', i + 2);
      if (close < 0) return undefined;
      i = close + 2;
    } else if (c === '"' || c === "'") {
      i++;
      while (i < src.length && src[i] !== c && src[i] !== '\n') i += src[i] === '\\' ? 2 : 1;
      if (src[i] !== c) return undefined;
      i++;
      push('string', start);
    } else if (c === '`') {
      i++;
      while (src[i] !== '`') {
        if (i >= src.length) return undefined;
        if (src[i] === '\\') i += 2;
        else if (src[i] === '$' && src[i + 1] === '{') {
          const inner = lex(src, i + 2, true);
          if (!inner) return undefined;
          i = inner.end;
        } else i++;
      }
      i++;
      push('template', start);
    } else if (c === '/' && regexMayStart(tokens[tokens.length - 1])) {
      i++;
      let inClass = false;
      while (i < src.length && src[i] !== '\n' && (inClass || src[i] !== '/')) {
        if (src[i] === '[') inClass = true;
        else if (src[i] === ']') inClass = false;
        i += src[i] === '\\' ? 2 : 1;
      }
      if (src[i] !== '/') return undefined;
      i++;
      while (i < src.length && /[a-z]/i.test(src[i] as string)) i++;
      push('regex', start);
    } else if (WORD_CHAR.test(c)) {
      while (i < src.length && WORD_CHAR.test(src[i] as string)) i++;
      push('word', start);
    } else if ('{}[](),;:'.includes(c)) {
      if (nested && c === '{') depth++;
      if (nested && c === '}') {
        if (depth === 0) return { tokens, end: i + 1 };
        depth--;
      }
      i++;
      push('punct', start);
    } else if (c === '.') {
      i += src.startsWith('...', i) ? 3 : 1;
      push('punct', start);
    } else if (OP_CHARS.includes(c) || c === '/') {
      i++;
      while (i < src.length && OP_CHARS.includes(src[i] as string)) i++;
      push('op', start);
    } else {
      i++;
      push('other', start);
    }
  }
  return nested ? undefined : { tokens, end: i };
}

export interface Source {
  src: string;
  tokens: Token[];
  /** For each bracket token, the index of its partner. */
  partner: number[];
}

const OPEN: Record<string, string> = { '{': '}', '[': ']', '(': ')' };
const CLOSE = new Set(['}', ']', ')']);

/** The source's tokens with its brackets paired; undefined when they do not pair up. */
export function read(src: string): Source | undefined {
  const lexed = lex(src);
  if (!lexed) return undefined;
  const { tokens } = lexed;
  const partner: number[] = [];
  const stack: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.kind !== 'punct') continue;
    if (OPEN[t.text]) stack.push(i);
    else if (CLOSE.has(t.text)) {
      const open = stack.pop();
      if (open === undefined || OPEN[(tokens[open] as Token).text] !== t.text) return undefined;
      partner[open] = i;
      partner[i] = open;
    }
  }
  return stack.length === 0 ? { src, tokens, partner } : undefined;
}

const textAt = (s: Source, i: number) => s.tokens[i]?.text;

/** The `{` of the object literal an expression starts with: `{` or `defineConfig({`. */
function objectAt(s: Source, i: number): number | undefined {
  if (textAt(s, i) === '{') return i;
  if (textAt(s, i) === 'defineConfig' && textAt(s, i + 1) === '(' && textAt(s, i + 2) === '{') return i + 2;
  return undefined;
}

/** `const name = {` / `const name: Type = defineConfig({`: the object's `{`. */
function objectOfVariable(s: Source, name: string): number | undefined {
  for (let i = 0; i < s.tokens.length - 1; i++) {
    if (!['const', 'let', 'var'].includes(textAt(s, i) ?? '') || textAt(s, i + 1) !== name) continue;
    let j = i + 2;
    // Past a type annotation, which may hold brackets of its own.
    while (j < s.tokens.length && textAt(s, j) !== '=') {
      const t = textAt(s, j) ?? '';
      if (t === ';' || CLOSE.has(t)) break;
      j = OPEN[t] ? (s.partner[j] as number) + 1 : j + 1;
    }
    if (textAt(s, j) === '=') return objectAt(s, j + 1);
  }
  return undefined;
}

/**
 * The candidates for the config object: every `defineConfig({`, and what `export default` or `module.exports =`
 * gives when that is an object literal or a variable holding one.
 */
export function configObjects(s: Source): number[] {
  const found = new Set<number>();
  for (let i = 0; i < s.tokens.length; i++) {
    const t = textAt(s, i);
    let value: number | undefined;
    if (t === 'defineConfig' && s.tokens[i]?.kind === 'word') value = i;
    else if (t === 'export' && textAt(s, i + 1) === 'default') value = i + 2;
    else if (t === 'module' && textAt(s, i + 1) === '.' && textAt(s, i + 2) === 'exports' && textAt(s, i + 3) === '=')
      value = i + 4;
    if (value === undefined) continue;
    const object = objectAt(s, value);
    if (object !== undefined) found.add(object);
    else if (s.tokens[value]?.kind === 'word' && t !== 'defineConfig') {
      const held = objectOfVariable(s, textAt(s, value) as string);
      if (held !== undefined) found.add(held);
    }
  }
  return [...found].sort((a, b) => a - b);
}

export interface Prop {
  /** A property `key: value` (or shorthand `key`), a spread `...x`, or anything else (a method, a computed key). */
  kind: 'prop' | 'spread' | 'other';
  key?: string;
  /** The value's tokens: [from, to). */
  from: number;
  to: number;
}

/** The members of the object literal whose `{` is at `open`. */
export function members(s: Source, open: number): Prop[] {
  const close = s.partner[open] as number;
  const out: Prop[] = [];
  let i = open + 1;
  while (i < close) {
    let j = i;
    while (j < close && textAt(s, j) !== ',') j = OPEN[textAt(s, j) ?? ''] ? (s.partner[j] as number) + 1 : j + 1;
    const first = s.tokens[i] as Token;
    if (j > i) {
      if (first.text === '...') out.push({ kind: 'spread', from: i + 1, to: j });
      else if ((first.kind === 'word' || first.kind === 'string') && textAt(s, i + 1) === ':' && j > i + 2) {
        const key = first.kind === 'string' ? first.text.slice(1, -1) : first.text;
        out.push({ kind: 'prop', key, from: i + 2, to: j });
      } else if (first.kind === 'word' && j === i + 1) out.push({ kind: 'prop', key: first.text, from: i, to: j });
      else out.push({ kind: 'other', from: i, to: j });
    }
    i = j + 1;
  }
  return out;
}

export type ValueKind = 'string' | 'array' | 'object' | 'expression';

export function valueKind(s: Source, p: Prop): ValueKind {
  const first = s.tokens[p.from] as Token;
  if (p.to - p.from === 1 && first.kind === 'string') return 'string';
  if (first.text === '[' && s.partner[p.from] === p.to - 1) return 'array';
  if (first.text === '{' && s.partner[p.from] === p.to - 1) return 'object';
  return 'expression';
}

export const valueText = (s: Source, p: Prop) =>
  s.src.slice((s.tokens[p.from] as Token).start, (s.tokens[p.to - 1] as Token).end);
