import type { OperationDef, Service } from '@casebridge/core/contract';

/**
 * Path-template router. Literal segments always win over parameters, so `/testRun/getTestRunsCreated`,
 * `/testRun/defects/runId` and `/testRun/adhoc/...` are never captured by `/testRun/{runID}`; when a literal branch
 * has no operation for the method, the parameter branch is tried (backtracking).
 */

interface Node {
  literal: Map<string, Node>;
  param: Node | null;
  ops: Map<string, { op: OperationDef; names: string[] }>;
}

const node = (): Node => ({ literal: new Map(), param: null, ops: new Map() });

export interface Match {
  op: OperationDef;
  /** Decoded path parameters by name. */
  params: Record<string, string>;
}

export type RouteResult = { kind: 'match'; match: Match } | { kind: 'method'; allowed: string[] } | { kind: 'none' };

export class Router {
  private readonly roots = new Map<Service, Node>();

  constructor(ops: readonly OperationDef[]) {
    for (const op of ops) this.add(op);
  }

  private add(op: OperationDef): void {
    let root = this.roots.get(op.service);
    if (!root) {
      root = node();
      this.roots.set(op.service, root);
    }
    const names: string[] = [];
    let cur = root;
    for (const seg of splitTemplate(op.path)) {
      const m = /^\{(.+)\}$/.exec(seg);
      if (m?.[1]) {
        names.push(m[1]);
        cur.param ??= node();
        cur = cur.param;
      } else {
        let next = cur.literal.get(seg);
        if (!next) {
          next = node();
          cur.literal.set(seg, next);
        }
        cur = next;
      }
    }
    const existing = cur.ops.get(op.method);
    // updateStep has two body forms on one route: the first definition routes, the server picks the form.
    if (!existing) cur.ops.set(op.method, { op, names });
  }

  /** Finds the operation for a raw (still percent-encoded) path after the service prefix. */
  route(service: Service, method: string, rawPath: string): RouteResult {
    const root = this.roots.get(service);
    if (!root) return { kind: 'none' };
    let path = rawPath;
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    const segs = path.split('/').slice(1);
    const values: string[] = [];
    const allowed = new Set<string>();
    const found = walk(root, segs, 0, method, values, allowed);
    if (found) {
      const params: Record<string, string> = {};
      found.names.forEach((name, i) => {
        params[name] = safeDecode(values[i] ?? '');
      });
      return { kind: 'match', match: { op: found.op, params } };
    }
    return allowed.size ? { kind: 'method', allowed: [...allowed] } : { kind: 'none' };
  }
}

function walk(
  n: Node,
  segs: string[],
  i: number,
  method: string,
  values: string[],
  allowed: Set<string>,
): { op: OperationDef; names: string[] } | undefined {
  if (i === segs.length) {
    const hit = n.ops.get(method);
    if (!hit) for (const m of n.ops.keys()) allowed.add(m);
    return hit;
  }
  const seg = segs[i] ?? '';
  const lit = n.literal.get(seg);
  if (lit) {
    const hit = walk(lit, segs, i + 1, method, values, allowed);
    if (hit) return hit;
  }
  if (n.param && seg !== '') {
    values.push(seg);
    const hit = walk(n.param, segs, i + 1, method, values, allowed);
    if (hit) return hit;
    values.pop();
  }
  return undefined;
}

function splitTemplate(path: string): string[] {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return p.split('/').slice(1);
}

/** Names of the `{name}` segments of a path template, in order. */
export function templateNames(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
}

/** Decodes one path segment; a malformed escape is kept as written rather than failing the request. */
export function safeDecode(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}
