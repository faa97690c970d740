import { describe, expect, it } from 'vitest';
import {
  isExpired,
  isQuarantineDate,
  parseQuarantineLine,
  quarantineLine,
  utcDay,
  withQuarantineLine,
} from '../../src/engine/defects/quarantine.js';
import { quarantineCap } from '../../src/engine/defects/quarantine-cap.js';
import { loadConfig } from '../../src/index.js';

/**
 * The pure parts of a quarantine's owner, end and cap (issue 39, point 4): the line in an issue's description that
 * says why, who and until when; expiry on a given day (UTC); the cap's arithmetic; the option and its variable.
 */

describe('the quarantine line', () => {
  it('reads back what it writes', () => {
    const line = quarantineLine({ reason: 'flaky on CI', owner: 'alice', until: '2025-07-31' });
    expect(line).toBe('casebridge-quarantine: reason=flaky on CI; owner=alice; until=2025-07-31');
    expect(parseQuarantineLine(`Some text\n${line}\nmore`)).toEqual({
      reason: 'flaky on CI',
      owner: 'alice',
      until: '2025-07-31',
    });
  });

  it('keeps a reason on one line and without a ";" that would end it', () => {
    const line = quarantineLine({ reason: 'times out;\n see DEMO-40' });
    expect(line).toBe('casebridge-quarantine: reason=times out, see DEMO-40');
    expect(parseQuarantineLine(line)).toEqual({ reason: 'times out, see DEMO-40' });
  });

  it('is lenient with what a person typed: order, spaces, a ";" inside the reason; a bad date is no end', () => {
    expect(parseQuarantineLine('casebridge-quarantine: until = 2025-01-02 ;owner=bob; reason=a; b')).toEqual({
      reason: 'a; b',
      owner: 'bob',
      until: '2025-01-02',
    });
    expect(parseQuarantineLine('casebridge-quarantine: reason=x; until=2025-02-30')).toEqual({ reason: 'x' });
    expect(parseQuarantineLine('casebridge-quarantine:')).toEqual({});
    expect(parseQuarantineLine('no line here')).toBeUndefined();
    // Only at the start of a line: a mention in prose is not the line.
    expect(parseQuarantineLine('see casebridge-quarantine: reason=x')).toBeUndefined();
  });

  it('replaces the line of a description, or puts it first', () => {
    const line = quarantineLine({ reason: 'r', until: '2025-01-01' });
    expect(withQuarantineLine('casebridge-id: abc\nSteps', line)).toBe(`${line}\n\ncasebridge-id: abc\nSteps`);
    expect(withQuarantineLine(`top\ncasebridge-quarantine: reason=old\nrest`, line)).toBe(`top\n${line}\nrest`);
    expect(withQuarantineLine('', line)).toBe(line);
  });
});

describe('expiry', () => {
  const now = new Date('2025-06-15T23:30:00-05:00'); // 2025-06-16 04:30 UTC

  it('a quarantine applies through its until day, in UTC; none without an end', () => {
    expect(utcDay(now)).toBe('2025-06-16');
    expect(isExpired('2025-06-16', now)).toBe(false);
    expect(isExpired('2025-06-15', now)).toBe(true);
    expect(isExpired('2026-01-01', now)).toBe(false);
    expect(isExpired(undefined, now)).toBe(false);
  });

  it('dates are real calendar days written YYYY-MM-DD', () => {
    expect(isQuarantineDate('2024-02-29')).toBe(true);
    expect(isQuarantineDate('2025-02-29')).toBe(false);
    expect(isQuarantineDate('2025-13-01')).toBe(false);
    expect(isQuarantineDate('2025-6-1')).toBe(false);
    expect(isQuarantineDate('31.07.2025')).toBe(false);
  });
});

describe('the cap', () => {
  it('is the share of the cases, rounded down, and at least one when the share is above 0', () => {
    expect(quarantineCap(0.05, 100)).toBe(5);
    expect(quarantineCap(0.05, 30)).toBe(1);
    expect(quarantineCap(0.05, 19)).toBe(1);
    expect(quarantineCap(0.05, 0)).toBe(1);
    expect(quarantineCap(0.29, 100)).toBe(29); // 28.999… in floating point
    expect(quarantineCap(0.5, 6)).toBe(3);
    expect(quarantineCap(1, 6)).toBe(6);
    expect(quarantineCap(0, 1000)).toBe(0);
  });

  it('quarantine.max: default 0.05, from 0 to 1, CASEBRIDGE_QUARANTINE_MAX as 0.2 or 20%', () => {
    const env = { CASEBRIDGE_URL: 'http://jira.test', CASEBRIDGE_PROJECT: 'DEMO', CASEBRIDGE_TOKEN: 't' };
    const load = (extra: Record<string, string>, inline: Record<string, unknown> = {}) =>
      loadConfig(inline, { env: { ...env, ...extra }, cwd: '/nonexistent' });
    const dflt = load({});
    expect(dflt.ok && dflt.config.quarantine.max).toBe(0.05);
    const share = load({ CASEBRIDGE_QUARANTINE_MAX: '0.2' });
    expect(share.ok && share.config.quarantine.max).toBe(0.2);
    const percent = load({ CASEBRIDGE_QUARANTINE_MAX: '20%' });
    expect(percent.ok && percent.config.quarantine.max).toBe(0.2);
    const words = load({ CASEBRIDGE_QUARANTINE_MAX: 'lots' });
    expect(words.ok).toBe(false);
    expect(words.ok ? [] : words.problems.join('\n')).toContain('CASEBRIDGE_QUARANTINE_MAX');
    const over = load({}, { quarantine: { max: 5 } });
    expect(over.ok).toBe(false);
    expect(over.ok ? '' : over.problems.join('\n')).toContain('expected a share from 0 to 1');
  });
});
