import { brief } from './edit-js.js';
import { REPORTER } from './runners.js';

/**
 * JSON configs: Jest's reporters in jest.config.json or in package.json's "jest" key, and the reading and writing
 * (in the file's own indent and line ends) that casebridge.config.json shares.
 */

/** The reporter in jest.config.json, or in (or as) the "jest" key of package.json: parsed, changed, written back. */
export function editJestJson(src: string, inPackage: boolean): { after: string; what: string } | { why: string } {
  const parsed = parseJsonObject(src, 'it is not a JSON object');
  if ('why' in parsed) return parsed;
  const { doc } = parsed;
  let holder = doc;
  let what: string;
  if (inPackage) {
    if (doc.jest === undefined) {
      doc.jest = { reporters: ['default', REPORTER.jest] };
      return { after: writeJson(src, doc), what: 'added a "jest" key with reporters ["default", "@casebridge/jest"]' };
    }
    if (!isObject(doc.jest)) return { why: 'its "jest" key is not an object' };
    holder = doc.jest;
  }
  const reporters = holder.reporters;
  if (reporters === undefined) {
    holder.reporters = ['default', REPORTER.jest];
    what = 'added "reporters": ["default", "@casebridge/jest"]';
  } else if (Array.isArray(reporters)) {
    reporters.push(REPORTER.jest);
    what = 'appended "@casebridge/jest" to "reporters"';
  } else {
    return { why: `its "reporters" is not a list (${brief(JSON.stringify(reporters))})` };
  }
  return { after: writeJson(src, doc), what: inPackage ? `${what} of the "jest" key` : what };
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON in the file's indentation (2 spaces when it has none), line ends and final newline. */
export function writeJson(before: string | undefined, doc: unknown): string {
  const indent = (before && /^([ \t]+)"/m.exec(before)?.[1]) || '  ';
  const eol = before?.includes('\r\n') ? '\r\n' : '\n';
  const text = JSON.stringify(doc, null, indent).replace(/\n/g, eol);
  return before === undefined || /\n$/.test(before) ? `${text}${eol}` : text;
}

/** The JSON object in `text`, or why it is not one (`notObject`: the reason for valid JSON that is not an object). */
export function parseJsonObject(text: string, notObject: string): { doc: Record<string, unknown> } | { why: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { why: `it is not valid JSON (${(err as Error).message})` };
  }
  return isObject(doc) ? { doc } : { why: notObject };
}
