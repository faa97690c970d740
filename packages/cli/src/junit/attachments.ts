import { statSync } from 'node:fs';
import { basename, extname, isAbsolute, resolve } from 'node:path';
import type { ResultAttachment } from '@casebridge/core';

/**
 * Files a JUnit XML refers to. Two conventions exist: `[[ATTACHMENT|path]]` lines in `<system-out>`/`<system-err>`
 * (Jenkins' JUnit Attachments plugin; Playwright and Cypress setups write them) and `<property name="attachment"
 * value="path"/>` (pytest's `record_property`, Playwright's `embedAttachmentsAsProperty`). A relative path is looked
 * up beside the XML file first, then in the working directory.
 */

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.webm': 'video/webm',
  '.mp4': 'video/mp4',
  '.zip': 'application/zip',
  '.json': 'application/json',
  '.html': 'text/html',
  '.xml': 'application/xml',
  '.md': 'text/markdown',
  '.txt': 'text/plain',
  '.log': 'text/plain',
};

export function contentTypeOf(path: string): string {
  return TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/** Property names whose value is a path (or several, one a line or comma separated). */
export function isAttachmentProperty(name: string): boolean {
  return /^(?:attachments?|testrun_evidence|screenshot|video|trace)$/i.test(name);
}

export function splitPaths(value: string): string[] {
  return value
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

const MARKER = /\[\[ATTACHMENT\|([^\]\r\n]+)\]\]/g;

/**
 * Scans streamed text for `[[ATTACHMENT|path]]` markers without holding the whole text: only the unfinished last
 * line is carried over (bounded: a marker is one short line).
 */
export class MarkerScanner {
  private carry = '';
  readonly paths: string[] = [];

  push(text: string): void {
    const joined = this.carry + text;
    const cut = joined.lastIndexOf('\n');
    const complete = cut < 0 ? '' : joined.slice(0, cut);
    this.carry = (cut < 0 ? joined : joined.slice(cut + 1)).slice(-4096);
    if (complete) this.scan(complete);
  }

  end(): void {
    this.scan(this.carry);
    this.carry = '';
  }

  private scan(text: string): void {
    for (const m of text.matchAll(MARKER)) this.paths.push((m[1] as string).trim());
  }
}

/** Resolves a referenced path to an attachment, or explains why it cannot be one. */
export function resolveAttachment(
  ref: string,
  xmlDir: string,
  cwd: string,
): { attachment: ResultAttachment } | { missing: string } {
  const candidates = isAbsolute(ref) ? [ref] : [resolve(xmlDir, ref), resolve(cwd, ref)];
  for (const path of candidates) {
    try {
      if (statSync(path).isFile()) {
        return { attachment: { name: basename(path), contentType: contentTypeOf(path), path } };
      }
    } catch {
      // Not there: try the next place.
    }
  }
  return { missing: `attachment ${ref} not found (looked in ${[...new Set(candidates)].join(', ')})` };
}
