import { issueByKey, statusDef } from '../rules/domain.js';
import type { Attachment, Cycle, Issue, Run, RunStatusDef, Store, User } from '../store/store.js';

/**
 * What the pages read from the store, beyond the shared domain rules: statuses in display order, cycles of a plan,
 * runs of a cycle, and the colours a status is drawn in. Each page builds its indexes once per request; a page of a
 * cycle with 10,000 runs costs a pass over the runs, not a scan per run.
 */

/** The run statuses a person can see: the enabled ones, built-ins first, then custom ones, by id. */
export function statusOrder(store: Store): RunStatusDef[] {
  return store.runStatuses.filter((s) => s.enabled).sort((a, b) => a.id - b.id);
}

/** Runs counted per status, in display order; a status no run has counts 0, a stored unknown status is kept last. */
export function countByStatus(store: Store, runs: Iterable<Run>): { name: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const s of statusOrder(store)) counts.set(s.name, 0);
  for (const run of runs) {
    const name = statusDef(store, run.status)?.name ?? run.status;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].map(([name, count]) => ({ name, count }));
}

/** The cycles of a plan (never the hidden ad hoc ones), oldest first. */
export function cyclesOfPlan(store: Store, planId: number): Cycle[] {
  return store.cycles.filter((c) => c.tpId === planId).sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
}

/** The plan's most recently created cycle. */
export function latestCycle(store: Store, planId: number): Cycle | undefined {
  return cyclesOfPlan(store, planId).at(-1);
}

/** The runs of every cycle, each list in run order (the order `reorderTestRun` sets). */
export function runsByCycle(store: Store): Map<number, Run[]> {
  const out = new Map<number, Run[]>();
  for (const run of store.runs.rows.values()) {
    const list = out.get(run.cycleId);
    if (list) list.push(run);
    else out.set(run.cycleId, [run]);
  }
  for (const list of out.values()) list.sort(byRunOrder);
  return out;
}

export function runsOfCycle(store: Store, cycleId: number): Run[] {
  return store.runs.filter((r) => r.cycleId === cycleId).sort(byRunOrder);
}

function byRunOrder(a: Run, b: Run): number {
  return a.order - b.order || a.id - b.id;
}

/** Attachments by run id (run-level ones under the run, step ones under `step:<stepId>`), built once per page. */
export function attachmentsIndex(store: Store): Map<string, Attachment[]> {
  const out = new Map<string, Attachment[]>();
  for (const a of store.attachments.rows.values()) {
    const key = a.runStepId === null ? `run:${a.runId}` : `step:${a.runStepId}`;
    const list = out.get(key);
    if (list) list.push(a);
    else out.set(key, [a]);
  }
  for (const list of out.values()) list.sort((a, b) => a.id - b.id);
  return out;
}

/** The issue of a plan cycle's plan; undefined for an ad hoc cycle. */
export function planOf(store: Store, cycle: Cycle): Issue | undefined {
  return cycle.tpId === null ? undefined : store.issues.get(cycle.tpId);
}

/** A user by login name, shown as `Display Name (name)`; the name alone when no such user exists. */
export function userLabel(store: Store, name: string | null): string {
  if (!name) return '';
  const user = store.users.find((u) => u.name === name);
  return user && user.displayName !== user.name ? `${user.displayName} (${user.name})` : name;
}

export function displayName(user: User): string {
  return user.displayName || user.name;
}

/** The issue at a key as typed in a URL: exact first, then upper-cased (Jira keys are case-insensitive there). */
export function issueAt(store: Store, key: string): Issue | undefined {
  return issueByKey(store, key) ?? issueByKey(store, key.toUpperCase());
}

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

/** A status's colour as a safe CSS value (a seed may hold any string there). */
export function statusColour(store: Store, status: string): string {
  const colour = statusDef(store, status)?.color ?? '';
  return HEX.test(colour) ? colour : '#999999';
}

/**
 * Black or white, whichever contrasts more with the background: one of the two always reaches 4.58:1, so a
 * status lozenge is readable whatever colour an administrator picked.
 */
export function textOn(hex: string): '#000000' | '#ffffff' {
  const full =
    hex.length === 4
      ? hex
          .slice(1)
          .split('')
          .map((c) => c + c)
          .join('')
      : hex.slice(1);
  const channel = (i: number) => {
    const v = Number.parseInt(full.slice(i, i + 2), 16) / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  const l = 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#000000' : '#ffffff';
}
