import { allBugsOfRun, bugsOf, runSteps } from '../rules/domain.js';
import type { Attachment, Issue, Run, RunStep } from '../store/store.js';
import { browseUrl, bytes, html, orDash, type SafeHtml, when } from './html.js';
import { statusColour, userLabel } from './model.js';
import { attachmentHref, type View } from './view.js';
import { facts, statusBadge, table } from './widgets.js';

/**
 * One run as a card, the way synapseRT's test-run dialog shows it: result, tester, who executed it and when, the
 * comment, each step with its result and actual result, attachments (images inline), defects and history. The
 * card's id is `run-<runId>`, so `#run-<runId>` on the page that holds it links to the run.
 */

/** Attachments by `run:<runId>` and `step:<runStepId>`; a page builds it once (see model.attachmentsIndex). */
export type AttachmentIndex = Map<string, Attachment[]>;

const IMAGE_TYPES = /^image\/(png|jpe?g|gif|webp|avif|bmp|svg\+xml)$/i;
const IMAGE_NAMES = /\.(png|jpe?g|gif|webp|avif|bmp|svg)$/i;

function isImage(a: Attachment): boolean {
  return IMAGE_TYPES.test(a.mimeType) || (a.mimeType === 'application/octet-stream' && IMAGE_NAMES.test(a.fileName));
}

/** Images inline with alt text and a download link below; other files as download links. */
export function attachmentList(v: View, files: readonly Attachment[], owner: string): SafeHtml {
  if (files.length === 0) return html``;
  // Screenshots first: they are what a person looks for in a failed run.
  const ordered = [...files].sort((a, b) => Number(isImage(b)) - Number(isImage(a)) || a.id - b.id);
  return html`<ul class="attachments">${ordered.map((a) => {
    const url = attachmentHref(v, a);
    const meta = html`<span class="muted">(${a.mimeType}, ${bytes(a.size)})</span>`;
    if (!isImage(a)) return html`<li><a href="${url}" download="${a.fileName}">${a.fileName}</a> ${meta}</li>`;
    return html`<li><figure>
      <img src="${url}" alt="${a.fileName}, attached to ${owner}" loading="lazy">
      <figcaption><a href="${url}" download="${a.fileName}">${a.fileName}</a> ${meta}</figcaption>
    </figure></li>`;
  })}</ul>`;
}

function bugLinks(bugs: readonly Issue[]): SafeHtml {
  return html`${bugs.map((b, i) => html`${i ? ', ' : ''}<a href="${browseUrl(b.key)}">${b.key}</a>`)}`;
}

function stepRow(v: View, run: Run, s: RunStep, index: AttachmentIndex, caseKey: string): SafeHtml {
  const bugs = bugsOf(v.store, run.id, s.id);
  const files = index.get(`step:${s.id}`) ?? [];
  return html`<tr>
    <th scope="row">${s.seq}</th>
    <td class="text">${s.step}</td>
    <td class="text">${orDash(s.stepData)}</td>
    <td class="text">${orDash(s.expectedResult)}</td>
    <td>${statusBadge(v.store, s.status)}</td>
    <td class="text">${orDash(s.actualResult)}</td>
    <td>${bugs.length ? bugLinks(bugs) : ''}${attachmentList(v, files, `step ${s.seq} of ${caseKey} run ${run.id}`)}${
      !bugs.length && !files.length ? html`<span class="muted">—</span>` : ''
    }</td>
  </tr>`;
}

function history(v: View, run: Run): SafeHtml {
  const entries = v.store.history.filter((h) => h.runId === run.id).sort((a, b) => a.at - b.at || a.id - b.id);
  return html`<details><summary>History (${entries.length})</summary><ol class="history">${entries.map((h) => {
    const user = v.store.users.get(h.userId);
    return html`<li>${when(h.at)}: ${user ? userLabel(v.store, user.name) : 'unknown user'}: ${h.activity}
      <span class="muted">(${h.activityType})</span></li>`;
  })}</ol></details>`;
}

/** The card of one run; `level` is the heading level of its title (3 under a page's h2). */
export function runCard(v: View, run: Run, index: AttachmentIndex, level: 3 | 4 = 3): SafeHtml {
  const { store } = v;
  const tc = store.issues.get(run.tcId);
  const caseKey = tc?.key ?? `case ${run.tcId}`;
  const titleId = `run-${run.id}-title`;
  const h = level === 3 ? ['h3', 'h4'] : ['h4', 'h5'];
  const sub = (text: string) => html`<${h[1]}>${text}</${h[1]}>`;
  const steps = runSteps(store, run.id);
  const files = index.get(`run:${run.id}`) ?? [];
  const bugs = allBugsOfRun(store, run.id).sort((a, b) => a.id - b.id);
  const attributes = run.attributes ? Object.entries(run.attributes).map(([k, val]) => `${k}: ${val}`) : [];
  return html`<li><article class="run" id="run-${run.id}" style="--status:${statusColour(store, run.status)}" aria-labelledby="${titleId}">
    <div class="run-head">
      <${h[0]} id="${titleId}">${tc ? html`<a href="${browseUrl(tc.key)}">${tc.key}</a> ${tc.summary}` : caseKey}</${h[0]}>
      <span>Status: ${statusBadge(store, run.status)}</span>
    </div>
    ${facts([
      ['Run', `${run.id}`],
      ['Tester', orDash(userLabel(store, run.tester))],
      ['Executed by', orDash(userLabel(store, run.executedBy))],
      ['Executed at', when(run.executedAt)],
      ['Attributes', attributes.length ? attributes.join(', ') : undefined],
      ['Urgency', run.urgency ?? undefined],
    ])}
    ${sub('Comment')}
    ${run.comment ? html`<p class="text">${run.comment}</p>` : html`<p class="muted">No comment.</p>`}
    ${sub('Steps')}
    ${table(
      `Steps of run ${run.id}`,
      ['#', 'Step', 'Test data', 'Expected result', 'Status', 'Actual result', 'Defects and files'],
      steps.map((s) => stepRow(v, run, s, index, caseKey)),
      { wide: true, empty: 'This run has no steps.' },
    )}
    ${sub('Attachments')}
    ${files.length ? attachmentList(v, files, `${caseKey} run ${run.id}`) : html`<p class="muted">No attachments.</p>`}
    ${sub('Defects')}
    ${
      bugs.length
        ? html`<ul>${bugs.map((b) => html`<li><a href="${browseUrl(b.key)}">${b.key}</a> ${b.summary} <span class="muted">(${b.status})</span></li>`)}</ul>`
        : html`<p class="muted">No defects.</p>`
    }
    ${history(v, run)}
  </article></li>`;
}
