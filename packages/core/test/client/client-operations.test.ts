import { demoSeed, type RunningEmulator, type SeedInput, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentRepositoryClient, JiraClient, NotFoundError, TestManagementClient } from '../../src/index.js';

/**
 * Every client operation against the real emulator, in both wire variants and all three timestamp formats: the
 * client must hand back the same normalised shapes (ids as numbers named `id`, timestamps as ISO strings) whatever
 * the server spells.
 */

const demo = demoSeed.projects?.[0];
if (!demo) throw new Error('the demo seed has no project');

/** Demo data plus two bugs (DEMO-11, DEMO-12) and an Active cycle of DEMO-1 with one run per member. */
const seed: SeedInput = {
  ...demoSeed,
  projects: [
    {
      ...demo,
      issues: [
        ...(demo.issues ?? []),
        { type: 'Bug', summary: 'Checkout button missing' },
        { type: 'Bug', summary: 'Logout hangs' },
      ],
      cycles: [{ plan: 'DEMO-1', name: 'Sprint 1', status: 'Active' }],
    },
  ],
};

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const ADMIN = { type: 'basic', username: 'admin', password: 'admin' } as const;

const matrix = [
  { variant: 'id', timestamps: 'iso' },
  { variant: 'ID', timestamps: 'legacy' },
  { variant: 'id', timestamps: 'epoch' },
] as const;

for (const { variant, timestamps } of matrix) {
  describe(`client operations (variant ${variant}, ${timestamps} timestamps)`, () => {
    let emu: RunningEmulator;
    let tm: TestManagementClient;
    beforeAll(async () => {
      emu = await startEmulator({ port: 0, seed, variant, timestamps });
      tm = new TestManagementClient({ baseUrl: emu.url, auth: ADMIN });
    });
    afterAll(async () => {
      await tm?.close();
      await emu?.close();
    });

    /** A new issue of the demo project, created through the Jira subset; its key. */
    const newIssue = async (type: string, summary: string) => {
      const created = await tm.jira.createIssue({
        fields: { project: { key: 'DEMO' }, summary, issuetype: { name: type } },
      });
      return created.key;
    };

    it('plans: members, tester assignment, cycles, information, created runs, defects', async () => {
      const caseKey = await newIssue('Test Case', 'Client adds me to the plan');
      await tm.plans.addMembers({ testPlanIssueKey: 'DEMO-1', testCaseKeys: [caseKey] });
      const members = await tm.plans.members({ testPlanIssueKey: 'DEMO-1' });
      const mine = members.find((m) => m.testCaseKey === caseKey);
      expect(mine, 'the new member is listed').toBeDefined();
      expect(typeof mine?.id).toBe('number');
      expect(mine?.tcId).toBeGreaterThan(0);

      const assigned = await tm.plans.assignTesterToTestCase({
        testPlanIssueKey: 'DEMO-1',
        memberId: mine?.id as number,
        userName: 'tester',
      });
      expect(assigned.data).toMatch(/tester/i);

      const name = `Client cycle ${variant} ${timestamps}`;
      await tm.plans.addCycle({ testPlanIssueKey: 'DEMO-1', name, environment: 'staging', build: '1.2.3' });
      const cycles = await tm.plans.cycles({ testPlanIssueKey: 'DEMO-1' });
      const cycle = cycles.find((c) => c.name === name);
      expect(cycle?.status).toBe('Draft');
      expect(typeof cycle?.id).toBe('number');
      const sprint = cycles.find((c) => c.name === 'Sprint 1');
      expect(sprint?.active).toBe(true);
      expect(sprint?.cycleStartedDate).toMatch(ISO);

      const info = await tm.plans.testPlanInformation({ testPlanIssueKey: 'DEMO-1', pageNumber: 1, pageSize: 50 });
      expect(info.testCycles.map((c) => c.testCycleName)).toContain('Sprint 1');

      const created = await tm.plans.getTestRunsCreated({
        testPlanIdOrKey: 'DEMO-1',
        cutOffDateAndTime: '2000-01-01 00:00:00',
      });
      expect(created.length).toBeGreaterThan(0);

      expect(await tm.defects.ofPlan({ testPlanIssueKey: 'DEMO-1' })).toEqual([]);

      if (variant === 'id') {
        await tm.plans.deleteCycleByIdOrName({ testPlanIssueKey: 'DEMO-1', body: { name } });
        const after = await tm.plans.cycles({ testPlanIssueKey: 'DEMO-1' });
        expect(after.some((c) => c.name === name)).toBe(false);
      }
    });

    it('runs: ad hoc run, result, steps, bugs, attachments, history, defects', async () => {
      const run = await tm.runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' });
      expect(typeof run.id).toBe('number');
      expect(run.status).toBe('Not Tested');

      const details = await tm.runs.get({ runID: run.id });
      const steps = details.testRunDetails?.testRunSteps ?? [];
      expect(steps.length, 'DEMO-2 has steps').toBeGreaterThan(0);
      const firstStep = steps[0] as { id: number };
      expect(typeof firstStep.id).toBe('number');

      await tm.runs.updateStep({ runStepId: firstStep.id, result: 'Failed', actualResult: 'The button is missing' });
      await tm.runs.update({ runId: String(run.id), result: 'Failed', comment: 'seen in CI', bugs: ['DEMO-11'] });
      const failed = await tm.runs.get({ runID: run.id });
      expect(failed.status).toBe('Failed');
      expect(failed.comment).toBe('seen in CI');
      expect(failed.bugs?.map((b) => b.key)).toContain('DEMO-11');

      await tm.attachments.addToRun({ runId: run.id, file: { data: 'PNG bytes', fileName: 'failure.png' } });
      await tm.attachments.addToRunStep({
        runId: run.id,
        stepno: 1,
        file: { data: 'log line', fileName: 'step.log' },
      });
      const files = await tm.attachments.getAttachmentDetails({ runId: run.id });
      expect(files.map((f) => f.fileName).sort()).toEqual(['failure.png', 'step.log']);
      const png = files.find((f) => f.fileName === 'failure.png');
      expect(png?.mimeType).toBe('image/png');
      await tm.attachments.deleteAttachment({ runId: run.id, attachmentId: png?.id as number });
      expect((await tm.attachments.getAttachmentDetails({ runId: run.id })).map((f) => f.fileName)).toEqual([
        'step.log',
      ]);

      const bug = await tm.defects.createRunBug({
        runId: run.id,
        fields: { project: { key: 'DEMO' }, summary: 'Login fails', issuetype: { name: 'Bug' } },
      });
      expect(bug.key).toMatch(/^DEMO-\d+$/);
      const stepBug = await tm.defects.createRunStepBug({
        runStepId: firstStep.id,
        fields: { project: { key: 'DEMO' }, summary: 'Step fails', issuetype: { name: 'Bug' } },
      });
      const ofRun = await tm.defects.ofRun({ runId: run.id });
      expect(ofRun.map((b) => b.key)).toEqual(expect.arrayContaining([bug.key, stepBug.key]));
      // The spec's literal path names no run: without a run, or with one that does not exist, an empty list.
      expect(await tm.defects.ofRun()).toEqual([]);
      expect(await tm.defects.ofRun({ runId: 999_999 })).toEqual([]);
      expect(await tm.defects.ofRun({ runId: 'TR-1' })).toEqual([]);

      const history = await tm.runs.caseTestRuns({ testCaseIssueKey: 'DEMO-2' });
      expect(history.length).toBeGreaterThan(0);
      for (const item of history as Array<{ executionTimeStamp?: string }>) {
        if (item.executionTimeStamp !== undefined) expect(item.executionTimeStamp).toMatch(ISO);
      }
      const adhoc = await tm.runs.adhocTestRuns({ testCaseIssueKey: 'DEMO-2' });
      expect(adhoc.map((r) => r.id)).toContain(run.id);
      const forDefect = await tm.runs.getTestRunsForDefect({ defectIssueKey: 'DEMO-11' });
      expect(forDefect.map((r) => r.id)).toContain(run.id);
    });

    it('runs of an Active cycle: bulk status, update by case key, bug links', async () => {
      const cycles = await tm.plans.cycles({ testPlanIssueKey: 'DEMO-1' });
      const sprint = cycles.find((c) => c.name === 'Sprint 1');
      const info = await tm.plans.testPlanInformation({ testPlanIssueKey: 'DEMO-1', pageNumber: 1, pageSize: 50 });
      const runs = (info.cycleWithRuns as Record<string, Array<{ id: number; testCaseKey: string }>>)['Sprint 1'] ?? [];
      expect(runs.length).toBeGreaterThan(1);
      await tm.runs.bulkStatusUpdate({
        testPlanIssueKey: 'DEMO-1',
        testCycleId: sprint?.id as number,
        status: 'Passed',
        runIds: runs.map((r) => r.id),
      });
      const one = runs[0] as { id: number; testCaseKey: string };
      expect((await tm.runs.get({ runID: one.id })).status).toBe('Passed');
      await tm.runs.updateTestRun({
        testPlanIssueKey: 'DEMO-1',
        cycleName: 'Sprint 1',
        testcaseKey: one.testCaseKey,
        result: 'Blocked',
        comment: 'env down',
      });
      await tm.runs.linkBugToTestRun({
        testPlanIssueKey: 'DEMO-1',
        cycleName: 'Sprint 1',
        testcaseKey: one.testCaseKey,
        bugs: ['DEMO-12'],
      });
      const after = await tm.runs.get({ runID: one.id });
      expect(after.status).toBe('Blocked');
      expect(after.bugs?.map((b) => b.key)).toContain('DEMO-12');
    });

    it('cycles: names with space, /, %, #, ? and unicode travel as one path segment; workflow, runs, members', async () => {
      const caseKey = await newIssue('Test Case', 'Cycle member');
      await tm.plans.addMembers({ testPlanIssueKey: 'DEMO-1', testCaseKeys: [caseKey] });
      const name = `CI 50% / #7 ? ünï 🚀 ${variant}${timestamps}`;
      await tm.plans.addCycle({ testPlanIssueKey: 'DEMO-1', name, environment: 'qa env', build: 'b/1' });
      await tm.cycles.addMembersToTestCycle({
        testPlanIssueKey: 'DEMO-1',
        testCycleName: name,
        addTestCaseKeys: [caseKey, 'DEMO-2'],
      });
      await tm.cycles.workflow({ testPlanIssueKey: 'DEMO-1', cycleName: name, action: 'Start' });
      const cycle = (await tm.plans.cycles({ testPlanIssueKey: 'DEMO-1' })).find((c) => c.name === name);
      expect(cycle?.status).toBe('Active');
      const byName = await tm.cycles.testRuns({ testPlanIssueKey: 'DEMO-1', cycleName: name });
      expect(byName.map((r) => r.testCaseKey).sort()).toEqual([caseKey, 'DEMO-2'].sort());
      const byId = await tm.cycles.testRunsByCycleId({ testPlanIssueKey: 'DEMO-1', cycleId: cycle?.id as number });
      expect(byId.map((r) => r.id)).toEqual(byName.map((r) => r.id));
      for (const run of byId) expect(typeof run.id).toBe('number');

      const [first, second] = byId as unknown as [{ id: number }, { id: number }];
      await tm.cycles.reorderTestRun({ testRunId: second.id, refTestRunId: -1 });
      const reordered = await tm.cycles.testRuns({ testPlanIssueKey: 'DEMO-1', cycleName: name });
      expect(reordered.map((r) => r.id)).toEqual([second.id, first.id]);

      await tm.runs.updateTestRun({
        testPlanIssueKey: 'DEMO-1',
        cycleName: name,
        testcaseKey: caseKey,
        result: 'Failed',
        comment: 'via the encoded name',
      });
      expect((await tm.runs.get({ runID: first.id })).status).toBe('Failed');
      await tm.runs.linkBugToTestRun({
        testPlanIssueKey: 'DEMO-1',
        cycleName: name,
        testcaseKey: caseKey,
        bugs: ['DEMO-11'],
      });
      const defects = await tm.defects.ofCycle({ testPlanIssueKey: 'DEMO-1', cycleId: cycle?.id as number });
      expect(defects.map((d) => d.key)).toContain('DEMO-11');
      expect((await tm.defects.ofBuild({ buildName: 'b/1' })).map((d) => d.key)).toContain('DEMO-11');
      expect((await tm.defects.ofEnvironment({ envName: 'qa env' })).map((d) => d.key)).toContain('DEMO-11');

      if (variant === 'id') {
        const assigned = await tm.cycles.bulkAssignUpdate({
          testPlanIssueKey: 'DEMO-1',
          testCycleId: cycle?.id as number,
          testerName: 'tester',
          runIds: [first.id],
        });
        expect(assigned.message).toMatch(/tester|assign/i);
        await tm.automation.addJobToTestCycle({
          testPlanKey: 'DEMO-1',
          testCycleName: name,
          appName: 'jenkins',
          jobKey: 'nightly',
          testType: 'e2e',
          params: 'BRANCH=main',
        });
        const job = await tm.automation.jobs({ testPlanKey: 'DEMO-1', testCycleName: name });
        expect(job.params).toContain(`SRTCYCLE=${cycle?.id}`);
        await tm.automation.triggerJob({
          testPlanKey: 'DEMO-1',
          testCycleName: name,
          automationBuildId: job.automationBuildId,
        });
      }

      await tm.cycles.workflow({ testPlanIssueKey: 'DEMO-1', cycleName: name, action: 'Complete' });
      const done = (await tm.plans.cycles({ testPlanIssueKey: 'DEMO-1' })).find((c) => c.name === name);
      expect(done?.status).toBe('Completed');
      expect(done?.cycleCompletedDate).toMatch(ISO);
    });

    it('test cases and steps: create, add, update by id and by position, delete, links', async () => {
      const created = await tm.cases.createTestCase({
        fields: { project: { key: 'DEMO' }, summary: 'Checkout with a saved card' },
        testcasesteps: [{ step: 'open cart', expectedResult: 'cart shown' }],
      });
      const key = created.key;
      expect(key).toMatch(/^DEMO-\d+$/);
      const added = await tm.cases.addSteps({
        testCaseIssueKey: key,
        body: [
          { step: 'pay', expectedResult: 'paid' },
          { step: 'logout', expectedResult: 'gone', stepData: 'user=a' },
        ],
      });
      expect(added.length).toBeGreaterThan(0);
      let steps = await tm.cases.steps({ testCaseIssueKey: key });
      expect(steps.map((s) => s.step)).toEqual(['open cart', 'pay', 'logout']);
      const pay = steps[1] as { id: number };
      expect(typeof pay.id).toBe('number');
      await tm.cases.updateStepById({ testCaseIssueKey: key, ID: pay.id, expectedResult: 'paid by card' });
      await tm.cases.updateStepBySequence({ testCaseIssueKey: key, sequenceNumber: 3, step: 'log out' });
      steps = await tm.cases.steps({ testCaseIssueKey: key });
      expect(steps.map((s) => [s.step, s.expectedResult])).toEqual([
        ['open cart', 'cart shown'],
        ['pay', 'paid by card'],
        ['log out', 'gone'],
      ]);
      await tm.cases.deleteStepBySequenceNo({ testCaseIssueKey: key, stepNo: 1 });
      await tm.cases.deleteStep({ testCaseIssueKey: key, stepId: pay.id });
      expect((await tm.cases.steps({ testCaseIssueKey: key })).map((s) => s.step)).toEqual(['log out']);

      await tm.plans.addMembers({ testPlanIssueKey: 'DEMO-1', testCaseKeys: [key] });
      const plans = await tm.cases.linkedTestPlans({ testCaseIssueKey: key });
      expect(plans.testPlans.map((p) => p.testPlanKey)).toContain('DEMO-1');
      const ref = await tm.cases.automationReference({ testCaseIssueKey: key });
      expect(typeof ref.automationReference === 'string' || ref.automationReference === null).toBe(true);
      expect(await tm.cases.linkedRequirements({ testCaseIssueKey: key })).toEqual([]);
      expect(await tm.defects.ofCase({ testCaseIssueKey: key })).toEqual([]);
      if (variant === 'id') {
        const inSuite = await tm.cases.createTestCaseInSuite({
          fields: { project: { key: 'DEMO' }, summary: 'Refund' },
          linkToTestSuite: { testSuitePath: 'Client/Pay\\/Refund', projectKey: 'DEMO' },
        });
        expect(inSuite.testCaseKey).toMatch(/^DEMO-\d+$/);
        await tm.cases.linkTestCaseToSuite({
          testCaseKeys: [key],
          testSuitePath: 'Client/Pay\\/Refund',
          projectKey: 'DEMO',
        });
        const suites = await tm.cases.linkedTestSuites({ testCaseIssueKey: key });
        expect(suites.testSuites).toEqual(['Client/Pay\\/Refund']);
      }
    });

    it.runIf(variant === 'id')('test suites: create a path, list it, read its members', async () => {
      const made = await tm.testSuites.create({ testSuitePath: 'Suites/A\\/B/C', projectKey: 'DEMO' });
      expect(made.testSuitePath).toBe('Suites/A\\/B/C');
      const list = await tm.testSuites.list({ projectKey: 'DEMO' });
      const leaf = list.find((s) => s.nameEncoded === 'Suites/A\\/B/C');
      expect(leaf?.name).toBe('C');
      const caseKey = await newIssue('Test Case', 'Suite member');
      await tm.cases.linkTestCaseToSuite({
        testCaseKeys: [caseKey],
        testSuitePath: 'Suites/A\\/B/C',
        projectKey: 'DEMO',
      });
      const detail = await tm.testSuites.get({ suiteId: leaf?.id as number });
      expect(detail.testSuiteMembers.map((m) => m.testCaseIssue.key)).toEqual([caseKey]);
    });

    it('requirements and requirement suites', async () => {
      const parent = await newIssue('Requirement', 'Client parent requirement');
      const child = await newIssue('Requirement', 'Client child requirement');
      await tm.requirements.addChildren({ requirementIssueKey: parent, requirementKeys: [child] });
      expect((await tm.requirements.getChildren({ requirementIssueKey: parent })).map((r) => r.key)).toEqual([child]);
      expect(
        (await tm.requirements.getOnlyImmediateChildren({ requirementIssueKey: parent })).map((r) => r.key),
      ).toEqual([child]);
      await tm.requirements.linkTestCase({ requirementIssueKey: child, testCaseKeys: ['DEMO-3'] });
      expect((await tm.requirements.linkedTestCases({ requirementIssueKey: child })).map((r) => r.key)).toEqual([
        'DEMO-3',
      ]);
      expect(Array.isArray(await tm.defects.ofRequirement({ requirementIssueKey: child }))).toBe(true);
      const suites = await tm.requirements.linkedRequirementSuites({ requirementIssueKey: child });
      expect(suites.requirementHierarchy).toBe(`${parent}->${child}`);
      await tm.requirements.deleteLinkedTestCases({ requirementIssueKey: child, testCaseKeys: ['DEMO-3'] });
      expect(await tm.requirements.linkedTestCases({ requirementIssueKey: child })).toEqual([]);

      const root = await tm.requirementSuites.create({
        projectKey: 'DEMO',
        suiteName: `Root ${variant}`,
        parentSuiteId: '0',
      });
      expect(typeof root.id).toBe('number');
      const sub = await tm.requirementSuites.create({
        projectKey: 'DEMO',
        suiteName: 'Payments / cards',
        parentSuiteId: String(root.id),
      });
      const issue = await tm.jira.issue({ issueIdOrKey: child });
      await tm.requirementSuites.addMember({
        requirementSuiteId: String(sub.id),
        memberId: issue.id,
        memberProjectKeyOrId: 'DEMO',
      });
      const got = await tm.requirementSuites.get({ suiteId: String(sub.id) });
      expect(got.requirements.map((r) => r.key)).toEqual([child]);
      const list = await tm.requirementSuites.list({ projectKey: 'DEMO' });
      expect(list.requirementSuites.map((s) => s.name)).toContain(`Root ${variant}`);
      await tm.requirementSuites.deleteMember({ requirementSuiteId: String(sub.id), memberId: issue.id });
      await tm.requirementSuites.delete({ projectKeyOrId: 'DEMO', requirementSuiteId: String(root.id) });
      await expect(tm.requirementSuites.get({ suiteId: String(sub.id) })).rejects.toBeInstanceOf(NotFoundError);
    });

    it('the Jira subset: myself, project, issues, transitions, search, session', async () => {
      const jira = new JiraClient({
        baseUrl: emu.url,
        auth: { type: 'session', username: 'admin', password: 'admin' },
      });
      try {
        expect((await jira.jira.myself()).name).toBe('admin');
        expect((await jira.jira.project({ projectIdOrKey: 'DEMO' })).key).toBe('DEMO');
        const types = await jira.jira.createMetaIssueTypes({ projectIdOrKey: 'DEMO' });
        const bugType = types.values.find((t) => t.name === 'Bug');
        expect(bugType).toBeDefined();
        const screen = await jira.jira.createMetaFields({ projectIdOrKey: 'DEMO', issueTypeId: String(bugType?.id) });
        // The demo's Bug screen: the four fields always there, and labels; only project, type and summary required.
        expect(screen.values.filter((f) => f.required).map((f) => f.fieldId)).toEqual([
          'summary',
          'issuetype',
          'project',
        ]);
        expect(screen.values.map((f) => f.fieldId)).toContain('labels');
        // The emulator answers as Jira 10 by default: the unpaged createmeta is gone since Jira 9.0.
        await expect(
          jira.jira.createMeta({ projectKeys: 'DEMO', issuetypeNames: 'Bug', expand: 'projects.issuetypes.fields' }),
        ).rejects.toBeInstanceOf(NotFoundError);
        const created = await jira.jira.createIssue({
          fields: { project: { key: 'DEMO' }, summary: 'Defect from the client', issuetype: { name: 'Bug' } },
        });
        const issue = await jira.jira.issue({ issueIdOrKey: created.key });
        expect(issue.key).toBe(created.key);
        const transitions = await jira.jira.transitions({ issueIdOrKey: created.key });
        const first = transitions.transitions[0];
        expect(first).toBeDefined();
        await jira.jira.transition({ issueIdOrKey: created.key, transition: { id: String(first?.id) } });
        // The emulator's index lags a write as a Data Center cluster's does (about a second): read until it shows.
        let found = await jira.jira.search({ jql: `key = ${created.key}` });
        for (let i = 0; i < 50 && found.issues.length === 0; i += 1) {
          await new Promise((r) => setTimeout(r, 100));
          found = await jira.jira.search({ jql: `key = ${created.key}` });
        }
        expect(found.issues.map((i) => i.key)).toEqual([created.key]);
        expect((await jira.jira.session()).name).toBe('admin');
        await jira.jira.logout();
      } finally {
        await jira.close();
      }
    });

    it('the content repository: session check, node creation, upload, ticket, storeFile', async () => {
      const repo = new ContentRepositoryClient({ baseUrl: emu.url, auth: ADMIN });
      try {
        expect((await repo.validateSession()).isValidLogin).toBe(true);
        const node = await repo.repo.createChild({
          repository: '-home-',
          parentNodeId: '-userhome-',
          type: 'ccm:io',
          renameIfExists: 'true',
          body: { 'cm:name': ['trace.zip'] },
        });
        const uploaded = await repo.repo.uploadContent({
          repository: '-home-',
          nodeId: node.node.ref.id,
          mimetype: 'application/zip',
          file: { data: 'PK fake zip', fileName: 'trace.zip' },
        });
        expect(uploaded.node.size).toBe(String('PK fake zip'.length));
        const ticket = await repo.repo.appAuth({ userId: 'tester' });
        expect(ticket.ticket.length).toBeGreaterThan(8);
        const stored = await repo.storeFile({ data: 'video bytes', fileName: 'video.webm' });
        expect(stored.downloadUrl).toMatch(/^https?:\/\//);
        const res = await fetch(stored.downloadUrl as string, {
          headers: { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` },
        });
        expect(await res.text()).toBe('video bytes');
      } finally {
        await repo.close();
      }
    });
  });
}
