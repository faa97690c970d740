import type { RunningEmulator } from '@casebridge/emulator';

/**
 * What a reporter left in the emulator, in a form two runs can be compared by: per case of a cycle (or per case's
 * ad hoc runs), the run status, the step statuses, whether a comment was written, the attachments by content hash,
 * and the linked defects by summary. Ids and times are left out: they differ from run to run.
 */
export interface RunState {
  key: string;
  status: string;
  steps: string[];
  comment: boolean;
  files: string[];
  bugs: string[];
}

export function cycleState(emu: RunningEmulator, cycleName: string): RunState[] {
  const cycles = emu.store.cycles.filter((c) => c.name === cycleName);
  if (cycles.length > 1) throw new Error(`${cycles.length} cycles are named "${cycleName}"`);
  const cycle = cycles[0];
  if (!cycle) return [];
  return statesOf(
    emu,
    emu.store.runs.filter((r) => r.cycleId === cycle.id),
  );
}

/** The ad hoc runs of all cases. */
export function adhocState(emu: RunningEmulator): RunState[] {
  const adhocCycles = new Set(emu.store.cycles.filter((c) => c.adhocTcId !== null).map((c) => c.id));
  return statesOf(
    emu,
    emu.store.runs.filter((r) => adhocCycles.has(r.cycleId)),
  );
}

function statesOf(emu: RunningEmulator, runs: ReturnType<RunningEmulator['store']['runs']['all']>): RunState[] {
  const s = emu.store;
  return runs
    .map((r) => ({
      key: s.issues.get(r.tcId)?.key ?? `?${r.tcId}`,
      status: r.status,
      steps: s.runSteps
        .filter((x) => x.runId === r.id)
        .sort((a, b) => a.seq - b.seq)
        .map((x) => x.status),
      comment: Boolean(r.comment),
      files: s.attachments
        .filter((a) => a.runId === r.id)
        .map((a) => a.sha256)
        .sort(),
      // A defect filed from a step is linked to the step and to the run: count it once.
      bugs: [
        ...new Set(
          s.bugLinks
            .filter((b) => b.runId === r.id)
            .map((b) => (s.issues.get(b.issueId)?.summary ?? '').replace(/\s+/g, ' ')),
        ),
      ].sort(),
    }))
    .sort((a, b) => a.key.localeCompare(b.key) || a.status.localeCompare(b.status));
}

/** Issues of type Bug, by summary. */
export function defects(emu: RunningEmulator): string[] {
  return emu.store.issues
    .filter((i) => i.type === 'Bug')
    .map((i) => i.summary)
    .sort();
}

/** Requests to the services (not the admin endpoints). */
export function serviceRequests(emu: RunningEmulator) {
  return emu.requests().filter((r) => !r.path.startsWith('/__emulator'));
}
