import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outcomeOf, type TestResult } from '@casebridge/core';
import { afterAll, describe, expect, it } from 'vitest';
import { type JunitFileStats, readJunit } from '../src/junit/parse.js';

/** The JUnit reader on samples written by the real tools (test/fixtures/junit/README.md names each origin). */

const ROOT = join(__dirname, '..', '..', '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'junit');
const tmp = mkdtempSync(join(tmpdir(), 'cb-junit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function collect(path: string, cwd = ROOT): Promise<{ tests: TestResult[]; stats: JunitFileStats }> {
  const reader = readJunit(path, { cwd });
  const tests: TestResult[] = [];
  for await (const t of reader) tests.push(t);
  return { tests, stats: reader.stats };
}

const sample = (p: string) => collect(join(FIXTURES, p));
const byTitle = (tests: TestResult[], title: string) => {
  const t = tests.find((x) => x.titlePath[x.titlePath.length - 1] === title);
  if (!t) throw new Error(`no test "${title}" in ${tests.map((x) => x.titlePath.join(' > ')).join(', ')}`);
  return t;
};
const attached = (t: TestResult) => t.attempts.flatMap((a) => a.attachments.map((f) => f.name));

describe('dialects', () => {
  it('pytest (xunit1: file and line): classes in the title path, properties, failure vs error, skipped, both attachment forms', async () => {
    const { tests, stats } = await sample('pytest/pytest-xunit1.xml');
    expect(stats).toMatchObject({ dialect: 'pytest', testcases: 5, notes: [] });
    const total = byTitle(tests, 'test_total_with_tax');
    expect(total).toMatchObject({ file: 'test_shop.py', line: 8, titlePath: ['TestCart', 'test_total_with_tax'] });
    expect(total.annotations).toContainEqual({ type: 'testCase', description: 'DEMO-5' });
    expect(outcomeOf(total)).toBe('failed');
    expect(total.attempts[0]?.errors[0]?.message).toMatch(/^AssertionError: total is wrong/);
    expect(total.attempts[0]?.errors[0]?.stack).toContain('print("computing total & tax <eur>")');
    expect(total.attempts[0]?.attachments).toEqual([
      { name: 'total.png', contentType: 'image/png', path: join(FIXTURES, 'pytest', 'screenshots', 'total.png') },
    ]);
    const setup = byTitle(tests, 'test_uses_broken_fixture');
    expect(setup.titlePath).toEqual(['test_uses_broken_fixture']);
    expect(setup.attempts[0]?.errors[0]?.message).toContain('failed on setup with "RuntimeError');
    expect(outcomeOf(byTitle(tests, 'test_skipped'))).toBe('skipped');
    expect(byTitle(tests, 'test_skipped').annotations).toContainEqual({ type: 'skip', description: 'not ready yet' });
    expect(attached(byTitle(tests, 'test_unmapped_passes'))).toEqual(['run.log']);
  });

  it('pytest xunit2 (no file attribute) gives the same files, title paths and ids', async () => {
    const one = (await sample('pytest/pytest-xunit1.xml')).tests;
    const two = (await sample('pytest/pytest-xunit2.xml')).tests;
    expect(two.map((t) => [t.id, t.file, t.titlePath])).toEqual(one.map((t) => [t.id, t.file, t.titlePath]));
  });

  it('gotestsum: the package as file, subtests split on "/", a key glued with "_" becomes an annotation', async () => {
    const { tests, stats } = await sample('go/gotestsum.xml');
    expect(stats).toMatchObject({ dialect: 'go', testcases: 6 });
    const sub = byTitle(tests, 'DEMO-5_with_tax');
    expect(sub).toMatchObject({ file: 'example.com/shop', titlePath: ['TestTotal', 'DEMO-5_with_tax'] });
    expect(sub.annotations).toContainEqual({ type: 'case', description: 'DEMO-5' });
    expect(sub.attempts[0]?.errors[0]?.message).toBe('cart_test.go:14: total = 11.9, want 11.99');
    expect(byTitle(tests, 'TestSkipped').annotations).toContainEqual({
      type: 'skip',
      description: 'cart_test.go:20: not ready yet',
    });
  });

  it('gotestsum --rerun-fails: the repeated testcase becomes a second attempt (flaky)', async () => {
    const { tests, stats } = await sample('go/gotestsum-rerun.xml');
    expect(stats.testcases).toBe(3);
    expect(tests).toHaveLength(2);
    const flaky = byTitle(tests, 'TestFlaky');
    expect(flaky.attempts.map((a) => [a.retry, a.status])).toEqual([
      [0, 'failed'],
      [1, 'passed'],
    ]);
    expect(outcomeOf(flaky)).toBe('flaky');
  });

  it('Maven Surefire: flakyFailure/flakyError before a pass, rerunFailure/rerunError after a failure, system-out per attempt', async () => {
    const { tests } = await sample('surefire/TEST-com.example.shop.CartTest.xml');
    const checkout = byTitle(tests, 'checkout');
    expect(checkout.file).toBe('com.example.shop.CartTest');
    expect(checkout.attempts.map((a) => a.status)).toEqual(['failed', 'failed', 'passed']);
    expect(checkout.attempts[0]?.errors[0]?.message).toBe('ConnectException: Connection refused');
    expect(checkout.attempts[0]?.stderr).toBe('retrying checkout');
    expect(outcomeOf(checkout)).toBe('flaky');
    const total = byTitle(tests, 'computesTotal');
    expect(total.attempts.map((a) => a.status)).toEqual(['failed', 'failed', 'failed']);
    expect(total.attempts.map((a) => a.stdout)).toEqual(['computing total', 'computing total (rerun 1)', undefined]);
    expect(total.attempts[1]?.errors[0]?.stack).toContain('CartTest.java:31');
    expect(outcomeOf(byTitle(tests, 'loadsPrices'))).toBe('failed');
    expect(byTitle(tests, 'loadsPrices').attempts).toHaveLength(2);
  });

  it('Playwright: title path split on " › ", annotations from properties, attachments beside the XML; includeRetries gives attempts', async () => {
    const plain = await sample('playwright/playwright.xml');
    expect(plain.stats).toMatchObject({ dialect: 'playwright', notes: [] });
    const total = byTitle(plain.tests, 'total with tax');
    expect(total).toMatchObject({ file: 'cart.spec.ts', titlePath: ['cart', 'total with tax'] });
    expect(total.annotations).toContainEqual({ type: 'testCase', description: 'DEMO-5' });
    expect(attached(total).filter((n) => n.endsWith('.png'))).toHaveLength(4);

    const retries = await sample('playwright/playwright-retries.xml');
    const t = byTitle(retries.tests, 'total with tax');
    expect(t.id).toBe(total.id);
    expect(t.attempts.map((a) => a.status)).toEqual(['failed', 'failed']);
    expect(t.attempts[1]?.attachments.map((a) => a.path)).toContainEqual(
      expect.stringContaining('cart-cart-total-with-tax-retry1'),
    );
    expect(outcomeOf(byTitle(retries.tests, 'flaky on first try'))).toBe('flaky');
  });

  it('Playwright projects: the suite hostname or a [project] prefix keeps the same test of two projects apart', async () => {
    const file = join(tmp, 'projects.xml');
    const suite = (host: string, name: string) =>
      `<testsuite name="cart.spec.ts" hostname="${host}"><testcase name="${name}" classname="cart.spec.ts"/></testsuite>`;
    writeFileSync(
      file,
      `<testsuites>${suite('chromium', 'cart › DEMO-2 adds')}${suite('firefox', 'cart › DEMO-2 adds')}${suite('', '[webkit] › cart › DEMO-2 adds')}</testsuites>`,
    );
    const { tests } = await collect(file, tmp);
    expect(tests.map((t) => [t.project, ...t.titlePath])).toEqual([
      ['chromium', 'cart', 'DEMO-2 adds'],
      ['firefox', 'cart', 'DEMO-2 adds'],
      ['webkit', 'cart', 'DEMO-2 adds'],
    ]);
    expect(new Set(tests.map((t) => t.id)).size).toBe(3);
  });

  it('Vitest: the file as classname, describe blocks split on " > ", entities decoded, [[ATTACHMENT]] in system-err', async () => {
    const { tests, stats } = await sample('vitest/vitest.xml');
    expect(stats.dialect).toBe('vitest');
    const t = byTitle(tests, '[DEMO-5] total with tax & <rounding>');
    expect(t).toMatchObject({
      file: 'tests/cart.test.ts',
      titlePath: ['cart', 'totals', '[DEMO-5] total with tax & <rounding>'],
    });
    expect(t.attempts[0]?.stdout).toBe('total computed');
    expect(attached(t)).toEqual(['total.png']);
    expect(tests.map((x) => outcomeOf(x))).toEqual(['passed', 'failed', 'skipped', 'skipped']);
  });

  it('jest-junit: the file attribute, the name as the title, properties', async () => {
    const { tests, stats } = await sample('jest/jest-junit.xml');
    expect(stats.dialect).toBe('jest');
    expect(tests.map((t) => t.file)).toEqual(Array(4).fill('src/cart.test.js'));
    expect(byTitle(tests, 'cart checkout').annotations).toEqual([{ type: 'testCase', description: 'DEMO-7' }]);
    expect(byTitle(tests, 'cart totals [DEMO-5] computes the total with tax').attempts[0]?.errors[0]?.stack).toContain(
      'cart.test.js:14:52',
    );
  });

  it('Cypress (mocha-junit-reporter): the file of the Root Suite, sibling and nested suites, describe + title', async () => {
    const { tests, stats } = await sample('cypress/mocha-junit.xml');
    expect(stats.dialect).toBe('mocha');
    expect(tests.map((t) => [t.file, ...t.titlePath])).toEqual([
      ['cypress/e2e/cart.cy.js', 'cart', 'DEMO-2 adds an item'],
      ['cypress/e2e/cart.cy.js', 'cart', 'computes the total with tax DEMO-5'],
      ['cypress/e2e/cart.cy.js', 'cart', 'removes an item'],
      ['cypress/e2e/login.cy.js', 'login', 'DEMO-3 logs in'],
    ]);
    expect(attached(tests[1] as TestResult)).toEqual(['cart -- computes the total with tax DEMO-5 (failed).png']);
  });
});

describe('text and files', () => {
  it('decodes entities and CDATA, keeps a stable id, bounds the output excerpt, notes a missing attachment', async () => {
    const file = join(tmp, 'entities.xml');
    const long = 'x'.repeat(10_000);
    writeFileSync(
      file,
      `\uFEFF<?xml version="1.0"?>\n<testsuite name="s"><testcase classname="a.B" name="DEMO-9 &quot;quoted&quot; &amp; &#x263A;">
<properties><property name="tags" value="@smoke, slow"/><property name="attachment" value="nope/missing.png"/></properties>
<failure message="a &lt; b" type="java.lang.AssertionError"><![CDATA[at <init> & more]]></failure>
<system-out>${long}<![CDATA[ <end> ]]></system-out></testcase></testsuite>`,
    );
    const { tests, stats } = await collect(file, tmp);
    const t = tests[0] as TestResult;
    expect(t.titlePath).toEqual(['DEMO-9 "quoted" & ☺']);
    expect(t.tags).toEqual(['smoke', 'slow']);
    expect(t.attempts[0]?.errors[0]).toEqual({ message: 'AssertionError: a < b', stack: 'at <init> & more' });
    expect(t.attempts[0]?.stdout?.length).toBeLessThanOrEqual(4096);
    expect(t.attempts[0]?.stdout?.endsWith('<end>')).toBe(true);
    expect(stats.notes).toEqual([expect.stringMatching(/entities\.xml:2: attachment nope\/missing\.png not found/)]);
    expect((await collect(file, tmp)).tests[0]?.id).toBe(t.id);
  });
});

describe('bad input', () => {
  const bad = async (name: string, text: string) => {
    const file = join(tmp, name);
    writeFileSync(file, text);
    return collect(file, tmp).then(
      () => undefined,
      (err: Error & { code?: string }) => err,
    );
  };

  it('a truncated file: the test cases completed before the cut are still yielded, then the error', async () => {
    const file = join(tmp, 'partial.xml');
    writeFileSync(file, '<testsuite name="s">\n<testcase name="a"/>\n<testcase name="b"/>\n<testcase name="c">');
    const seen: string[] = [];
    const err = await (async () => {
      for await (const t of readJunit(file, { cwd: tmp })) seen.push(t.titlePath.join(' > '));
    })().catch((e: Error) => e);
    expect(seen).toEqual(['a', 'b']);
    expect(err?.message).toMatch(/^malformed XML: partial\.xml:4:\d+: unclosed tag: testcase/);
  });

  it('a truncated file: the position and the end tag that was expected', async () => {
    const err = await bad('cut.xml', '<testsuites>\n<testsuite name="s">\n<testcase name="a"><failure message="x">bo');
    expect(err?.code).toBe('malformed');
    expect(err?.message).toMatch(/^malformed XML: cut\.xml:3:\d+: .*expected <\/\w+> before the end of the file/);
  });

  it('an HTML entity or mismatched tag: file:line:column and what was open', async () => {
    const amp = await bad('amp.xml', '<testsuite name="s">\n  <testcase name="a &nbsp; b"/>\n</testsuite>');
    expect(amp?.message).toMatch(/amp\.xml:2:26: undefined entity.*expected well-formed XML/);
    const tag = await bad('tag.xml', '<testsuite name="s">\n<testcase name="a">\n</testsuite>');
    expect(tag?.message).toMatch(/tag\.xml:3:12: unexpected close tag.* \(inside <testsuite> opened at line 1\)/);
  });

  it('not JUnit XML, an empty file, a missing file', async () => {
    expect((await bad('page.xml', '<html><body/></html>'))?.message).toBe(
      'page.xml: not JUnit XML: the root element is <html>, expected <testsuites> or <testsuite>',
    );
    expect((await bad('empty.xml', ''))?.code).toBe('malformed');
    const missing = await collect(join(tmp, 'absent.xml'), tmp).catch((e: Error & { code?: string }) => e);
    expect(missing).toMatchObject({ code: 'missing', message: 'absent.xml: no such file' });
  });
});
