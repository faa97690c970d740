import type { ParserPlugin } from '@babel/parser';
import type { Expression, File, Node, ObjectExpression } from '@babel/types';

/**
 * A runner config read by a real parser, for init to find where its reporters are.
 *
 * Why `@babel/parser` and text splices (see edit-js.ts), rather than the alternatives:
 * - a hand-made lexer (what init had) must guess whether a `/` divides or starts a regular expression; after `)` it
 *   guessed wrong, and `if (x) /['"{]/.test(x);` in a helper made init give up on a valid playwright.config.ts;
 * - magicast is this same parser plus a recast-style printer (and `@babel/types`, `source-map-js`): init needs only
 *   positions, and a splice at exact offsets keeps every byte it does not add, which a printer does not promise;
 * - the TypeScript compiler would need `typescript` (about 23 MB) at run time, for the same positions.
 * `@babel/parser` 7 is one 530 kB file with no runtime imports, reads JavaScript and TypeScript (`satisfies`,
 * generics, `as const`), ESM and CommonJS, supports Node >= 6 (8.x needs Node >= 22.18: the CLI supports 20.19, so
 * it stays on 7), and is already in most projects (Jest's and Babel's own parser). It is loaded on first use, so the
 * other commands do not pay for it.
 */

export interface Parsed {
  src: string;
  ast: File;
  /** `src` with every comment blanked out (line ends kept): a search for code skips them. */
  code: string;
}

let parser: Promise<typeof import('@babel/parser')> | undefined;

/**
 * `src` parsed as TypeScript (which reads almost every JavaScript config too), else as JavaScript with JSX; `why`
 * names the parser's first complaint when neither reads it.
 */
export async function parseConfig(src: string): Promise<Parsed | { why: string }> {
  const { parse } = await (parser ??= import('@babel/parser'));
  let first: unknown;
  for (const plugins of [['typescript'], ['jsx']] as ParserPlugin[][]) {
    try {
      const ast = parse(src, {
        sourceType: 'unambiguous',
        plugins,
        allowReturnOutsideFunction: true,
        allowAwaitOutsideFunction: true,
        attachComment: false,
      });
      const parts: string[] = [];
      let at = 0;
      for (const c of ast.comments ?? []) {
        parts.push(src.slice(at, c.start ?? 0), src.slice(c.start ?? 0, c.end ?? 0).replace(/[^\r\n]/g, ' '));
        at = c.end ?? 0;
      }
      parts.push(src.slice(at));
      return { src, ast, code: parts.join('') };
    } catch (err) {
      first ??= err;
    }
  }
  const message = first instanceof Error ? first.message : String(first);
  return { why: `casebridge could not parse it as JavaScript or TypeScript (${message})` };
}

/** Every node below `node`, depth first. */
export function* walk(node: Node): Generator<Node> {
  yield node;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'loc' || key === 'extra' || value === null || typeof value !== 'object') continue;
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child !== null && typeof child === 'object' && typeof (child as Node).type === 'string') {
        yield* walk(child as Node);
      }
    }
  }
}

export const startOf = (n: Node) => n.start ?? 0;
export const endOf = (n: Node) => n.end ?? 0;
export const textOf = (p: Parsed, n: Node) => p.src.slice(startOf(n), endOf(n));

/** The expression under TypeScript's `as`, `satisfies`, `!` and `<T>` and under parentheses. */
export function unwrap(e: Expression): Expression {
  let x = e;
  while (
    x.type === 'TSAsExpression' ||
    x.type === 'TSSatisfiesExpression' ||
    x.type === 'TSNonNullExpression' ||
    x.type === 'TSTypeAssertion' ||
    x.type === 'ParenthesizedExpression'
  ) {
    x = x.expression;
  }
  return x;
}

/** Calls whose object arguments are the config: the runners' `defineConfig`, Vitest's `mergeConfig` and kin. */
const CONFIG_CALLS = new Set(['defineConfig', 'mergeConfig', 'defineProject']);

const isModuleExports = (n: Node) =>
  n.type === 'MemberExpression' &&
  n.object.type === 'Identifier' &&
  n.object.name === 'module' &&
  ((!n.computed && n.property.type === 'Identifier' && n.property.name === 'exports') ||
    (n.property.type === 'StringLiteral' && n.property.value === 'exports'));

/**
 * The candidates for the config object: the object literals that `export default`, `module.exports =` or
 * `export =` give, directly, through `defineConfig(...)` / `mergeConfig(...)` arguments, or through a top-level
 * variable holding one. A config made by a function, a ternary or an import gives none.
 */
export function configObjects(p: Parsed): ObjectExpression[] {
  const declared = new Map<string, Expression>();
  const roots: Expression[] = [];
  for (const statement of p.ast.program.body) {
    const d = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
    if (d?.type === 'VariableDeclaration') {
      for (const v of d.declarations) if (v.id.type === 'Identifier' && v.init) declared.set(v.id.name, v.init);
    }
    if (statement.type === 'ExportDefaultDeclaration') {
      const e = statement.declaration;
      if (e.type !== 'FunctionDeclaration' && e.type !== 'ClassDeclaration' && e.type !== 'TSDeclareFunction') {
        roots.push(e as Expression);
      }
    } else if (statement.type === 'TSExportAssignment') {
      roots.push(statement.expression);
    } else if (
      statement.type === 'ExpressionStatement' &&
      statement.expression.type === 'AssignmentExpression' &&
      statement.expression.operator === '=' &&
      isModuleExports(statement.expression.left)
    ) {
      roots.push(statement.expression.right);
    }
  }
  const found = new Set<ObjectExpression>();
  const seen = new Set<string>();
  const resolve = (e: Expression) => {
    const x = unwrap(e);
    if (x.type === 'ObjectExpression') found.add(x);
    else if (x.type === 'AssignmentExpression') resolve(x.right);
    else if (x.type === 'CallExpression') {
      const callee = x.callee;
      const name =
        callee.type === 'Identifier'
          ? callee.name
          : callee.type === 'MemberExpression' && callee.property.type === 'Identifier'
            ? callee.property.name
            : undefined;
      if (name === undefined || !CONFIG_CALLS.has(name)) return;
      for (const a of x.arguments) {
        if (a.type !== 'SpreadElement' && a.type !== 'ArgumentPlaceholder') resolve(a as Expression);
      }
    } else if (x.type === 'Identifier' && !seen.has(x.name)) {
      seen.add(x.name);
      const held = declared.get(x.name);
      if (held) resolve(held);
    }
  };
  for (const r of roots) resolve(r);
  return [...found].sort((a, b) => startOf(a) - startOf(b));
}

export interface Member {
  /** A property `key: value` (or shorthand `key`, or a method `key() {}`), a spread `...x`, or a computed key. */
  kind: 'prop' | 'spread' | 'other';
  key?: string;
  /** The whole member, key included. */
  node: Node;
  /** The value (a spread's argument); none for a method or accessor, whose value is code. */
  value?: Expression;
}

/** The members of an object literal. */
export function members(o: ObjectExpression): Member[] {
  return o.properties.map((m): Member => {
    if (m.type === 'SpreadElement') return { kind: 'spread', node: m, value: m.argument };
    const k = m.key;
    const key =
      !m.computed && k.type === 'Identifier'
        ? k.name
        : k.type === 'StringLiteral'
          ? k.value
          : !m.computed && k.type === 'NumericLiteral'
            ? String(k.value)
            : undefined;
    if (key === undefined) return { kind: 'other', node: m };
    if (m.type === 'ObjectMethod') return { kind: 'prop', key, node: m };
    return { kind: 'prop', key, node: m, value: m.value as Expression };
  });
}

export type ValueKind = 'string' | 'array' | 'object' | 'variable' | 'expression';

export function valueKind(m: Member): ValueKind {
  if (!m.value) return 'expression';
  const v = unwrap(m.value);
  if (v.type === 'StringLiteral' || (v.type === 'TemplateLiteral' && v.expressions.length === 0)) return 'string';
  if (v.type === 'ArrayExpression') return 'array';
  if (v.type === 'ObjectExpression') return 'object';
  if (v.type === 'Identifier') return 'variable';
  return 'expression';
}

/** The member's value as written (a method: the whole member). */
export const valueText = (p: Parsed, m: Member) => textOf(p, m.value ?? m.node);

/** Whether a string in the code (not in a comment) holds `name`. */
export function namesInCode(p: Parsed, name: string): boolean {
  for (const n of walk(p.ast.program)) {
    if (n.type === 'StringLiteral' && n.value.includes(name)) return true;
    if (n.type === 'TemplateElement' && n.value.raw.includes(name)) return true;
  }
  return false;
}
