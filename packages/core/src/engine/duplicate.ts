import type { TestManagementClient } from '../client/tm.js';

/**
 * Closes an issue this process created while another machine created the same one first (a test case, a defect):
 * through the workflow's closing transition, with resolution Duplicate where its screen takes one. Best effort:
 * false when the workflow offers no closing transition or refuses it (the caller names the duplicate instead).
 * Costs two or three requests, only when machines raced.
 */
export async function closeAsDuplicate(tm: TestManagementClient, key: string, signal?: AbortSignal): Promise<boolean> {
  const o = signal ? { signal } : undefined;
  try {
    const { transitions } = await tm.jira.transitions({ issueIdOrKey: key }, o);
    const close = transitions.find((t) => /done|close|resolve/i.test(`${t.name} ${t.to?.name ?? ''}`));
    if (!close) return false;
    try {
      await tm.jira.transition(
        { issueIdOrKey: key, transition: { id: close.id }, fields: { resolution: { name: 'Duplicate' } } },
        o,
      );
    } catch {
      await tm.jira.transition({ issueIdOrKey: key, transition: { id: close.id } }, o);
    }
    return true;
  } catch {
    return false;
  }
}
