import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/client/errors.js';
import { defectFieldsSchema, type ScreenField, screenProblems } from '../../src/engine/config/defect-fields.js';
import { loadConfig } from '../../src/engine/config/load.js';
import { groupOf } from '../../src/engine/defects/groups.js';
import { DefectRefusals, refusedFields } from '../../src/engine/defects/refusals.js';
import { defectDescription, defectSummary, templateVars } from '../../src/engine/defects/text.js';
import type { TestResult } from '../../src/engine/kernel/model.js';

/** `defects.fields`, the summary and description templates, refused creates and the create-screen check. */

const base = { url: 'https://jira.example.com', token: 't', projectKey: 'DEMO' };
const load = (defects: Record<string, unknown>) => loadConfig({ ...base, defects }, { env: {}, cwd: '/nonexistent' });

describe('defects.fields schema', () => {
  it('accepts the known fields in Jira create shape and any JSON in custom fields', () => {
    const fields = {
      labels: ['ci', 'casebridge'],
      components: [{ name: 'Checkout' }, { id: '10001' }],
      priority: { name: 'High' },
      fixVersions: [{ name: '1.1' }],
      versions: [{ name: '1.0' }],
      assignee: { name: 'jdoe' },
      duedate: '2030-01-31',
      environment: 'CI',
      customfield_10010: { value: 'Web' },
      customfield_10020: [{ value: 'A' }, { value: 'B' }],
      customfield_10030: 3,
    };
    const loaded = load({ fields });
    expect(loaded.ok && loaded.config.defects.fields).toEqual(fields);
  });

  it('refuses the fields casebridge sets, naming the option to use', () => {
    const loaded = load({
      fields: { summary: 'x', project: { key: 'X' }, description: 'd', issuetype: { name: 'B' } },
    });
    expect(loaded.ok).toBe(false);
    const problems = loaded.ok ? [] : loaded.problems;
    expect(problems).toContain(
      'defects.fields.summary: casebridge sets summary itself: use defects.summaryTemplate instead',
    );
    expect(problems).toContain(
      'defects.fields.project: casebridge sets project itself: use defects.projectKey instead',
    );
    expect(problems).toContain(
      'defects.fields.description: casebridge sets description itself: use defects.descriptionTemplate instead',
    );
    expect(problems).toContain(
      'defects.fields.issuetype: casebridge sets issuetype itself: use defects.issueType instead',
    );
  });

  it('refuses wrong shapes and unknown fields, naming the path', () => {
    const bad = (fields: unknown) => {
      const r = defectFieldsSchema.safeParse(fields);
      return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    };
    expect(bad({ components: { name: 'Checkout' } })).toEqual([
      'components: expected a list, e.g. [{ name: "Checkout" }]',
    ]);
    expect(bad({ components: [{}] })).toEqual(['components.0: expected { name: "..." } or { id: "..." }']);
    expect(bad({ labels: ['has space'] })).toEqual(['labels.0: expected a label without spaces (Jira refuses them)']);
    expect(bad({ duedate: '31/01/2030' })).toEqual(['duedate: expected a date as yyyy-MM-dd']);
    expect(bad({ team: 'Web' })[0]).toMatch(
      /^team: not a field casebridge can send: expected labels, .* customfield_NNNNN$/,
    );
    expect(bad({ customfield_1: () => 1 })).toEqual(['customfield_1: expected a JSON value']);
    expect(bad(['labels'])).toEqual([': expected an object of Jira create fields, e.g. { labels: ["ci"] }']);
    expect(bad({})).toEqual([]);
  });
});

const stack = (root: string) =>
  [
    'Error: expect(received).toBe(expected)',
    `    at Object.<anonymous> (${root}/tests/cart.test.js:12:19)`,
    '    at node_modules/jest-circus/build/run.js:1:1',
  ].join('\n');

const failing: TestResult = {
  id: 'tests/cart.test.js > cart > adds an item',
  file: 'tests/cart.test.js',
  line: 10,
  titlePath: ['cart', 'adds an item'],
  project: 'chromium',
  tags: [],
  annotations: [],
  attempts: [
    {
      retry: 0,
      status: 'failed',
      durationMs: 1,
      errors: [{ message: 'expect(received).toBe(expected)\n\nExpected: 2\nReceived: 1', stack: stack('/w/p') }],
      steps: [],
      attachments: [],
    },
  ],
};
const error = failing.attempts[0]?.errors[0];
const group = groupOf(failing);
const input = {
  test: failing,
  error,
  key: 'DEMO-5',
  runId: 7,
  runner: 'jest',
  group,
  env: { BUILD_URL: 'https://ci/1', TEAM: 'web' },
};

describe('templates', () => {
  it('expand every variable, the environment too', () => {
    const vars = templateVars(input);
    const template =
      '${title}|${test}|${error}|${file}|${line}|${location}|${ciUrl}|${runner}|${project}|${key}|${TEAM}|${UNSET}';
    expect(defectDescription(template, vars, input)).toBe(
      'adds an item|tests/cart.test.js > cart > adds an item|expect(received).toBe(expected)|tests/cart.test.js|12|tests/cart.test.js:12|https://ci/1|jest|chromium|DEMO-5|web|',
    );
    // The stack starts with the first line only: message and stack, each once.
    expect(vars.errorFull).toBe(`expect(received).toBe(expected)\n\nExpected: 2\nReceived: 1\n${stack('/w/p')}`);
    // Without a frame in the test file, the test's own line.
    const noStack = templateVars({ ...input, error: { message: 'boom' } });
    expect([noStack.line, noStack.location, noStack.errorFull]).toEqual(['10', 'tests/cart.test.js:10', 'boom']);
  });

  it('by default the description is the built-in one, and a regression is named first either way', () => {
    const vars = templateVars(input);
    const built = defectDescription(undefined, vars, input);
    expect(built.split('\n').slice(0, 4)).toEqual([
      'Test: tests/cart.test.js > cart > adds an item [chromium] (jest)',
      'Test case: DEMO-5, run 7',
      `Failure group: Error at tests/cart.test.js:12; other tests failing the same way there link this defect.`,
      'CI build: https://ci/1',
    ]);
    expect(built.endsWith(`Fingerprint: cb-${group.hash}`)).toBe(true);
    expect(defectDescription('${location}', vars, { ...input, regressionOf: 'DEMO-9' })).toBe(
      'Regression of DEMO-9: it had the same failure and is closed.\ntests/cart.test.js:12',
    );
  });

  it('the group marker ends the summary whatever the template (long, empty, multi-line, quoting a marker)', () => {
    const vars = templateVars(input);
    const tag = ` [cb-${group.hash}]`;
    const cases = [
      '${title}: ${error}',
      '${errorFull}${errorFull}${errorFull}',
      '${UNSET}',
      'line one\n\n  line two ${location}',
      `see [cb-0123456789abcdef] ${'x'.repeat(300)}`,
    ];
    for (const template of cases) {
      const summary = defectSummary(template, vars, group.hash, {});
      expect(summary.endsWith(tag), template).toBe(true);
      expect(summary.length, template).toBeLessThanOrEqual(255);
      expect(summary.match(/\[cb-[0-9a-f]{16}\]/g), template).toHaveLength(1);
      expect(summary, template).not.toMatch(/\n/);
    }
    expect(defectSummary('${title}: ${error}', vars, group.hash, {})).toBe(
      `adds an item: expect(received).toBe(expected)${tag}`,
    );
    expect(defectSummary('${UNSET}', vars, group.hash, {})).toBe(`adds an item${tag}`);
  });
});

describe('refused creates', () => {
  const refusal500 = new ValidationError(
    'HTTP 500: the service refused the input',
    "Jira refused the defect's fields: components: Component/s is required.; customfield_10010: Team is required.",
    {},
  );
  it('name the fields of synapseRT 500s and Jira 400s', () => {
    expect(refusedFields(refusal500.serverMessage)).toEqual([
      { id: 'components', message: 'Component/s is required' },
      { id: 'customfield_10010', message: 'Team is required' },
    ]);
    expect(refusedFields("priority: Priority name 'Urgentest' is not valid")).toEqual([
      { id: 'priority', message: "Priority name 'Urgentest' is not valid" },
    ]);
  });

  it('give one problem line per distinct refusal, with the count, and block later creates', () => {
    const r = new DefectRefusals({ priority: { name: 'Urgentest' } });
    expect(r.blocking).toBeUndefined();
    const first = r.refused(refusal500);
    expect(r.blocking).toBe(first);
    // In the order failures come (it varies run to run); the line names them in key order, DEMO-2 before DEMO-10.
    for (let i = 29; i >= 0; i--) r.noteNotFiled(first, `DEMO-${i + 2}`);
    const one = r.refused(new ValidationError('HTTP 400', "priority: Priority name 'Urgentest' is not valid", {}));
    r.noteNotFiled(one, 'DEMO-40');
    expect(r.lines()).toEqual([
      'defects for 30 failures (DEMO-2, DEMO-3, DEMO-4, 27 more) not filed: Jira refused their fields: components: Component/s is required; customfield_10010: Team is required (set defects.fields.components, set defects.fields.customfield_10010, see doctor)',
      "defect for DEMO-40 not filed: Jira refused its fields: priority: Priority name 'Urgentest' is not valid (correct defects.fields.priority, see doctor)",
    ]);
    expect(r.note(first)).toBe(
      'Defect not filed: Jira refused its fields: components: Component/s is required; customfield_10010: Team is required (set defects.fields.components, set defects.fields.customfield_10010, see doctor)',
    );
  });

  it('go one at a time until the first has answered, then side by side', async () => {
    const r = new DefectRefusals(undefined);
    let running = 0;
    let most = 0;
    const opened: Array<() => void> = [];
    const create = () =>
      new Promise<void>((done) => {
        running += 1;
        most = Math.max(most, running);
        opened.push(() => {
          running -= 1;
          done();
        });
      });
    const first = r.inTurn(create);
    const rest = [r.inTurn(create), r.inTurn(create), r.inTurn(create)];
    await new Promise((t) => setImmediate(t));
    expect(running).toBe(1);
    opened.shift()?.();
    await first;
    await new Promise((t) => setImmediate(t));
    expect(running).toBe(3);
    for (const open of opened.splice(0)) open();
    await Promise.all(rest);
    expect(most).toBe(3);
  });
});

describe('create screen check', () => {
  const screen: ScreenField[] = [
    { fieldId: 'summary', name: 'Summary', required: true, schema: { type: 'string' } },
    { fieldId: 'project', name: 'Project', required: true, schema: { type: 'project' } },
    { fieldId: 'labels', name: 'Labels', required: false, schema: { type: 'array', items: 'string' } },
    {
      fieldId: 'components',
      name: 'Component/s',
      required: true,
      schema: { type: 'array', items: 'component' },
      allowedValues: [
        { id: '10000', name: 'Checkout' },
        { id: '10001', name: 'Search' },
      ],
    },
    {
      fieldId: 'priority',
      name: 'Priority',
      required: true,
      hasDefaultValue: true,
      schema: { type: 'priority' },
      allowedValues: [{ id: '1', name: 'Highest' }],
    },
    {
      fieldId: 'customfield_10010',
      name: 'Team',
      required: true,
      schema: { type: 'option', custom: 'select' },
      allowedValues: [{ id: '10002', value: 'Web' }],
    },
  ];
  it('names required fields missing with an example, fields not on the screen, values not allowed', () => {
    expect(screenProblems(screen, { labels: ['ci'] })).toEqual([
      {
        fieldId: 'components',
        problem: 'Component/s (components) is required',
        fix: 'set defects.fields.components, e.g. [{"name":"Checkout"}]',
      },
      {
        fieldId: 'customfield_10010',
        problem: 'Team (customfield_10010) is required',
        fix: 'set defects.fields.customfield_10010, e.g. {"value":"Web"}',
      },
    ]);
    const wrong = screenProblems(screen, {
      components: [{ name: 'checkout' }, { name: 'Billing' }],
      customfield_10010: { value: 'web' },
      fixVersions: [{ name: '1.1' }],
      priority: { id: '1' },
    });
    expect(wrong.map((p) => p.problem)).toEqual([
      'Component/s (components): {"name":"Billing"} is not allowed (allowed: Checkout, Search)',
      'Team (customfield_10010): {"value":"web"} is not allowed (allowed: Web)',
      'fixVersions is not on the create screen',
    ]);
    expect(screenProblems(screen, { components: [{ id: '10001' }], customfield_10010: { id: '10002' } })).toEqual([]);
  });
});
