import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator as RunningEmulatorLike } from '../src/index.js';
import { applySeed, demoSeed, type SeedInput } from '../src/seed/seed.js';
import { startEmulator } from '../src/server.js';
import { Store } from '../src/store/store.js';
import { call, expectShape, useEmulator } from './helpers.js';

/**
 * Jira workflows per project and issue type (seed `workflows`): the demo's German Bug workflow (no closing
 * transition from the first status, a closing screen with required fields, a Done without resolution, closed bugs
 * not editable), a careful client that closes an issue by status category, and a workflow with no way to close.
 */

const API = '/rest/api/2';

interface TransitionItem {
  id: string;
  name: string;
  to: { name: string; statusCategory: { key: string } };
  hasScreen: boolean;
  fields?: Record<string, { required: boolean; allowedValues?: { id: string; name?: string; value?: string }[] }>;
}

async function transitions(emu: RunningEmulatorLike, key: string): Promise<TransitionItem[]> {
  const r = await call(emu, 'GET', `${API}/issue/${key}/transitions`, { query: { expand: 'transitions.fields' } });
  expect(r.status).toBe(200);
  return r.json.transitions;
}

const move = (emu: RunningEmulatorLike, key: string, body: Record<string, unknown>) =>
  call(emu, 'POST', `${API}/issue/${key}/transitions`, { body });

const fieldsOf = async (emu: RunningEmulatorLike, key: string) =>
  (await call(emu, 'GET', `${API}/issue/${key}`)).json.fields;

/**
 * What a careful client does to close an issue as a duplicate, knowing no names: a transition into the done
 * category (preferring one whose screen takes a resolution), its required fields filled from their allowed values;
 * when none is offered, one step towards work (a transition into another category), at most three steps.
 */
async function closeCarefully(emu: RunningEmulatorLike, key: string): Promise<string[]> {
  const taken: string[] = [];
  for (let step = 0; step < 3; step++) {
    const offered = await transitions(emu, key);
    const done = offered.filter((t) => t.to.statusCategory.key === 'done');
    const close = done.find((t) => t.fields?.resolution) ?? done[0];
    if (close) {
      const fields: Record<string, unknown> = {};
      for (const [id, f] of Object.entries(close.fields ?? {})) {
        if (id === 'resolution') {
          fields.resolution = { name: f.allowedValues?.find((v) => v.name === 'Duplicate')?.name ?? 'Done' };
        } else if (f.required && f.allowedValues?.[0]) {
          fields[id] = { id: f.allowedValues[0].id };
        }
      }
      const r = await move(emu, key, { transition: { id: close.id }, fields });
      expect(r.status, r.text).toBe(204);
      taken.push(close.name);
      return taken;
    }
    const onward = offered.find((t) => t.to.statusCategory.key === 'indeterminate') ?? offered[0];
    if (!onward) return taken;
    expect((await move(emu, key, { transition: { id: onward.id } })).status).toBe(204);
    taken.push(onward.name);
  }
  return taken;
}

describe('the demo Bug workflow (German-language instance)', () => {
  const emu = useEmulator();
  const newBug = async (summary: string) => {
    const r = await call(emu(), 'POST', `${API}/issue`, {
      body: { fields: { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary } },
    });
    expect(r.status).toBe(201);
    return r.json.key as string;
  };

  it('starts in Offen and offers no closing transition from there', async () => {
    const key = await newBug('starts open');
    expect((await fieldsOf(emu(), key)).status).toMatchObject({ name: 'Offen', statusCategory: { key: 'new' } });
    const r = await call(emu(), 'GET', `${API}/issue/${key}/transitions`);
    const offered = expectShape('jira.transitions', 'id', r.json).transitions;
    expect(offered.map((t: { name: string }) => t.name)).toEqual(['Bearbeiten']);
    // Without the expand, no fields; the English "Done" of the default workflow is not offered.
    expect(r.json.transitions[0].fields).toBeUndefined();
    const english = await move(emu(), key, { transition: { id: '21' } });
    expect(english.status).toBe(400);
    expect(english.json.errorMessages).toEqual(["Transition id '21' is not valid for this issue."]);
  });

  it('describes the closing screen: required resolution and root cause with their allowed values', async () => {
    const key = await newBug('screen');
    expect((await move(emu(), key, { transition: { id: '11' } })).status).toBe(204);
    const offered = await transitions(emu(), key);
    expect(offered.map((t) => [t.id, t.name, t.to.name, t.to.statusCategory.key, t.hasScreen])).toEqual([
      ['21', 'Erledigen', 'Erledigt', 'done', true],
      ['31', 'Ohne Lösung schließen', 'Erledigt', 'done', false],
    ]);
    const screen = offered[0]?.fields ?? {};
    expect(Object.keys(screen)).toEqual(['resolution', 'customfield_10200', 'comment']);
    expect(screen.resolution).toMatchObject({
      required: true,
      schema: { type: 'resolution', system: 'resolution' },
      operations: ['set'],
    });
    expect(screen.resolution?.allowedValues?.map((v) => v.name)).toContain('Duplicate');
    expect(screen.customfield_10200).toMatchObject({ required: true, name: 'Ursache' });
    expect(screen.customfield_10200?.allowedValues?.map((v) => v.value)).toEqual([
      'Code',
      'Konfiguration',
      'Umgebung',
      'Test',
    ]);
    expect(screen.comment).toMatchObject({ required: false, schema: { system: 'comment' } });
    expect(offered[1]?.fields).toEqual({});
  });

  it('refuses a closing transition without its required fields, naming each, and writes nothing', async () => {
    const key = await newBug('required');
    await move(emu(), key, { transition: { id: '11' } });
    const bare = await move(emu(), key, { transition: { id: '21' } });
    expect(bare.status).toBe(400);
    expect(bare.json).toEqual({
      errorMessages: [],
      errors: { resolution: 'Resolution is required.', customfield_10200: 'Ursache is required.' },
    });
    const wrong = await move(emu(), key, {
      transition: { id: '21' },
      fields: { resolution: { name: 'Erledigt' }, customfield_10200: { value: 'Wetter' }, labels: ['x'] },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.json.errors).toEqual({
      resolution: "Resolution 'Erledigt' does not exist.",
      customfield_10200: "Option value 'Wetter' is not valid",
      labels: "Field 'labels' cannot be set. It is not on the appropriate screen, or unknown.",
    });
    // A comment needs a screen that has it.
    const comment = { comment: [{ add: { body: 'why' } }] };
    const noScreen = await move(emu(), key, { transition: { id: '31' }, update: comment });
    expect(noScreen.json.errors).toEqual({
      comment: "Field 'comment' cannot be set. It is not on the appropriate screen, or unknown.",
    });
    expect((await fieldsOf(emu(), key)).status.name).toBe('In Arbeit');

    const ok = await move(emu(), key, {
      transition: { id: '21' },
      fields: { resolution: { name: 'duplicate' }, customfield_10200: { value: 'Test' } },
      update: comment,
    });
    expect(ok.status, ok.text).toBe(204);
    const closed = await fieldsOf(emu(), key);
    expect(closed.status).toMatchObject({ name: 'Erledigt', statusCategory: { key: 'done' } });
    expect(closed.resolution).toMatchObject({ name: 'Duplicate', id: '3' });
    expect(closed.customfield_10200).toMatchObject({ value: 'Test' });
  });

  it('"Ohne Lösung schließen" closes without a resolution: done by category, unresolved by field', async () => {
    const key = await newBug('no resolution');
    await move(emu(), key, { transition: { id: '11' } });
    expect((await move(emu(), key, { transition: { id: '31' } })).status).toBe(204);
    const f = await fieldsOf(emu(), key);
    expect(f.status.statusCategory.key).toBe('done');
    expect(f.resolution).toBeNull();
  });

  it('a closed bug refuses edits as Jira does (jira.issue.editable=false); reopened, it takes them', async () => {
    const key = await newBug('edit me');
    await closeCarefully(emu(), key);
    const edit = await call(emu(), 'PUT', `${API}/issue/${key}`, {
      body: { fields: { summary: 'edited', description: 'd' } },
    });
    expect(edit.status).toBe(400);
    expect(edit.json).toEqual({
      errorMessages: [],
      errors: {
        summary: "Field 'summary' cannot be set. It is not on the appropriate screen, or unknown.",
        description: "Field 'description' cannot be set. It is not on the appropriate screen, or unknown.",
      },
    });
    expect((await fieldsOf(emu(), key)).summary).toBe('edit me');
    expect((await move(emu(), key, { transition: { id: '41' } })).status).toBe(204);
    const reopened = await fieldsOf(emu(), key);
    expect(reopened.status.name).toBe('Wieder geöffnet');
    expect(reopened.resolution).toBeNull();
    expect((await call(emu(), 'PUT', `${API}/issue/${key}`, { body: { fields: { summary: 'edited' } } })).status).toBe(
      204,
    );
  });

  it('a careful client closes a bug as Duplicate in two steps, by category and allowed values', async () => {
    const key = await newBug('duplicate of another');
    expect(await closeCarefully(emu(), key)).toEqual(['Bearbeiten', 'Erledigen']);
    const f = await fieldsOf(emu(), key);
    expect(f.resolution.name).toBe('Duplicate');
    expect(f.customfield_10200.value).toBe('Code');
  });

  it('other issue types keep the default workflow (Done from anywhere)', async () => {
    const r = await call(emu(), 'POST', `${API}/issue`, {
      body: { fields: { project: { key: 'DEMO' }, issuetype: { name: 'Task' }, summary: 'a task' } },
    });
    expect((await fieldsOf(emu(), r.json.key)).status.name).toBe('Open');
    expect(await closeCarefully(emu(), r.json.key)).toEqual(['Done']);
  });
});

/** A rehearsal seed: a workflow with no closing transition at all, for Bugs of project P. */
const noWayOut: SeedInput = {
  users: [{ name: 'admin', password: 'admin', admin: true }],
  projects: [
    {
      key: 'P',
      name: 'P',
      issues: [
        { type: 'Bug', summary: 'stuck' },
        { type: 'Task', summary: 't' },
      ],
    },
  ],
  workflows: [
    {
      name: 'Triage only',
      projects: ['P'],
      issueTypes: ['Bug'],
      statuses: [
        { name: 'New', category: 'new' },
        { name: 'Triaged', category: 'indeterminate' },
      ],
      transitions: [
        { id: 5, name: 'Triage', from: ['New'], to: 'Triaged' },
        { id: 6, name: 'Back', from: ['Triaged'], to: 'New' },
      ],
    },
    // Less specific (every type of P): Tasks follow it, Bugs the one above.
    {
      name: 'P tasks',
      projects: ['P'],
      statuses: [
        { name: 'Backlog', category: 'new' },
        { name: 'Shipped', category: 'done', editable: false },
        { name: 'Parked', category: 'new' },
      ],
      transitions: [
        { id: 7, name: 'Ship', to: 'Shipped', resolution: 'Fixed' },
        {
          id: 8,
          name: 'Park',
          from: ['Backlog'],
          to: 'Parked',
          screen: { fields: ['comment'], required: ['comment'] },
        },
      ],
    },
  ],
};

describe('a seeded workflow with no closing transition', () => {
  const emu = useEmulator({ seed: noWayOut });

  it('offers nothing in the done category however far a client walks', async () => {
    expect((await fieldsOf(emu(), 'P-1')).status.name).toBe('New');
    expect(await closeCarefully(emu(), 'P-1')).toEqual(['Triage', 'Back', 'Triage']);
    expect((await fieldsOf(emu(), 'P-1')).resolution).toBeNull();
  });

  it('picks the most specific workflow; a post-function resolution applies without a screen', async () => {
    expect((await fieldsOf(emu(), 'P-2')).status.name).toBe('Backlog');
    const t = await transitions(emu(), 'P-2');
    expect(t.map((x) => [x.name, x.hasScreen, Object.keys(x.fields ?? {})])).toEqual([
      ['Ship', false, []],
      ['Park', true, ['comment']],
    ]);
    expect((await move(emu(), 'P-2', { transition: { id: 7 } })).status).toBe(204);
    expect((await fieldsOf(emu(), 'P-2')).resolution.name).toBe('Fixed');
    // A resolution on a transition without a screen cannot be set.
    const bare = await call(emu(), 'POST', `${API}/issue`, {
      body: { fields: { project: { key: 'P' }, issuetype: { name: 'Task' }, summary: 'second' } },
    });
    const r = await move(emu(), bare.json.key, { transition: { id: 7 }, fields: { resolution: { name: 'Done' } } });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.errors)).toEqual(['resolution']);
  });

  it('a screen may require a comment, given as update.comment', async () => {
    const r = await call(emu(), 'POST', `${API}/issue`, {
      body: { fields: { project: { key: 'P' }, issuetype: { name: 'Task' }, summary: 'park me' } },
    });
    const key = r.json.key as string;
    const bare = await move(emu(), key, { transition: { id: 8 } });
    expect(bare.json).toEqual({ errorMessages: [], errors: { comment: 'Comment is required.' } });
    const blank = await move(emu(), key, { transition: { id: 8 }, update: { comment: [{ add: { body: ' ' } }] } });
    expect(blank.json.errors).toEqual({ comment: 'Comment is required.' });
    const asField = await move(emu(), key, { transition: { id: 8 }, fields: { comment: 'x' } });
    expect(Object.keys(asField.json.errors)).toEqual(['comment']);
    const other = await move(emu(), key, {
      transition: { id: 8 },
      update: { comment: [{ add: { body: 'later' } }], labels: [{ add: 'x' }] },
    });
    expect(Object.keys(other.json.errors)).toEqual(['labels']);
    const ok = await move(emu(), key, { transition: { id: 8 }, update: { comment: [{ add: { body: 'later' } }] } });
    expect(ok.status, ok.text).toBe(204);
    expect((await fieldsOf(emu(), key)).status.name).toBe('Parked');
    expect(emu().store.issues.find((i) => i.key === key)?.fields?.comment).toMatchObject([
      { body: 'later', author: 'admin' },
    ]);
  });

  it('JQL knows the workflow statuses', async () => {
    const r = await call(emu(), 'GET', `${API}/search`, { query: { jql: 'status = Triaged' } });
    expect(r.status).toBe(200);
  });
});

/** An instance in German: its own resolutions, and validators that require fields the metadata does not flag. */
const german: SeedInput = {
  users: [{ name: 'admin', password: 'admin', admin: true }],
  projects: [
    {
      key: 'G',
      name: 'G',
      issues: [
        { type: 'Bug', summary: 'b' },
        { type: 'Bug', summary: 'c', status: 'Geschlossen' },
      ],
    },
  ],
  resolutions: ['Behoben', 'Duplikat', 'Erledigt'],
  workflows: [
    {
      name: 'G',
      projects: ['G'],
      statuses: [
        { name: 'Offen', category: 'new' },
        { name: 'Geschlossen', category: 'done' },
      ],
      transitions: [
        {
          id: 2,
          name: 'Schließen',
          from: ['Offen'],
          to: 'Geschlossen',
          screen: { fields: ['resolution', 'comment'], validators: ['resolution', 'comment'] },
        },
      ],
    },
  ],
};

describe('resolutions in the instance language and validators', () => {
  const emu = useEmulator({ seed: german });

  it('lists the instance resolutions; a validator-required field is not flagged, yet refused when missing', async () => {
    const [close] = await transitions(emu(), 'G-1');
    expect(close?.fields?.resolution?.required).toBe(false);
    expect(close?.fields?.resolution?.allowedValues).toMatchObject([
      { id: '10100', name: 'Behoben' },
      { id: '10101', name: 'Duplikat' },
      { id: '10102', name: 'Erledigt' },
    ]);
    const bare = await move(emu(), 'G-1', { transition: { id: '2' } });
    expect(bare.json.errors).toEqual({ resolution: 'Resolution is required.', comment: 'Comment is required.' });
    const english = await move(emu(), 'G-1', {
      transition: { id: '2' },
      fields: { resolution: { name: 'Duplicate' } },
      update: { comment: [{ add: { body: 'dup' } }] },
    });
    expect(english.json.errors).toEqual({ resolution: "Resolution 'Duplicate' does not exist." });
    const ok = await move(emu(), 'G-1', {
      transition: { id: '2' },
      fields: { resolution: { id: '10101' } },
      update: { comment: [{ add: { body: 'dup' } }] },
    });
    expect(ok.status, ok.text).toBe(204);
    expect((await fieldsOf(emu(), 'G-1')).resolution).toMatchObject({ id: '10101', name: 'Duplikat' });
    // A seeded issue in a done status takes the instance's Done, or its first resolution.
    expect((await fieldsOf(emu(), 'G-2')).resolution.name).toBe('Behoben');
  });

  it('refuses a post-function resolution the instance does not have', () => {
    const bad = structuredClone(german);
    const t = bad.workflows?.[0]?.transitions?.[0];
    if (t) t.resolution = 'Duplicate';
    expect(() => applySeed(new Store(), bad)).toThrow(
      /transitions\.2\.resolution: Duplicate is not a resolution \(Behoben, Duplikat, Erledigt\)/,
    );
  });
});

describe('workflows in the seed', () => {
  const seedWith = (workflow: Record<string, unknown>, extra: Partial<SeedInput> = {}): SeedInput => ({
    users: [{ name: 'a', password: 'a' }],
    projects: [{ key: 'P', name: 'P' }],
    workflows: [{ name: 'W', statuses: [{ name: 'A', category: 'new' }], ...workflow } as never],
    ...extra,
  });
  const refuse = (seed: SeedInput, message: RegExp) => expect(() => applySeed(new Store(), seed)).toThrow(message);

  it('refuses unknown statuses, projects and fields, and a status with two categories, naming the place', () => {
    refuse(seedWith({ transitions: [{ id: 1, name: 'go', to: 'B' }] }), /workflows\.0 \(W\)\.transitions\.1: status B/);
    refuse(seedWith({ projects: ['Q'] }), /workflows\.0 \(W\)\.projects: Q is not a project of the seed/);
    refuse(
      seedWith({ transitions: [{ id: 1, name: 'go', to: 'A', screen: { fields: ['team'] } }] }),
      /screen\.fields: unknown field 'team'/,
    );
    refuse(
      seedWith({ transitions: [{ id: 1, name: 'go', to: 'A', screen: { fields: [], required: ['resolution'] } }] }),
      /screen\.required: 'resolution' is not in its fields/,
    );
    refuse(
      seedWith(
        {},
        {
          workflows: [
            { name: 'W1', statuses: [{ name: 'Closed', category: 'done' }] },
            { name: 'W2', statuses: [{ name: 'closed', category: 'new' }] },
          ],
        },
      ),
      /status closed is new here and done in another workflow/,
    );
    refuse(
      seedWith({
        transitions: [
          { id: 1, name: 'a', to: 'A' },
          { id: 1, name: 'b', to: 'A' },
        ],
      }),
      /transition id 1 is used twice/,
    );
  });

  it('seeds issues in their workflow: a status it has (resolved when done), else refused', () => {
    const store = new Store();
    const bugs = (status: string) => ({
      ...demoSeed,
      projects: [
        { ...demoSeed.projects?.[0], key: 'DEMO', name: 'Demo', issues: [{ type: 'Bug', summary: 'b', status }] },
      ],
    });
    applySeed(store, bugs('Erledigt'));
    expect(store.issues.all().map((i) => [i.status, i.resolution])).toEqual([['Erledigt', 'Done']]);
    refuse(bugs('Done'), /DEMO-1\.status: Done is not a status of workflow DEMO: Fehler-Workflow \(Offen, /);
  });

  it('keeps workflows across a restart (dataDir) and across a reset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'casebridge-workflows-'));
    try {
      const first = await startEmulator({ port: 0, dataDir: dir, seed: demoSeed });
      const bug = await call(first, 'POST', `${API}/issue`, {
        body: { fields: { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary: 'persisted' } },
      });
      await first.close();
      const second = await startEmulator({ port: 0, dataDir: dir });
      try {
        expect((await transitions(second, bug.json.key)).map((t) => t.name)).toEqual(['Bearbeiten']);
        await second.reset();
        const again = await call(second, 'POST', `${API}/issue`, {
          body: { fields: { project: { key: 'DEMO' }, issuetype: { name: 'Bug' }, summary: 'after reset' } },
        });
        expect((await fieldsOf(second, again.json.key)).status.name).toBe('Offen');
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
