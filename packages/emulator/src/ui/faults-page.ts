import { ZodError } from 'zod';
import type { FaultRule, FaultRuleInput } from '../behaviour/faults.js';
import type { Exchange } from '../kernel/exchange.js';
import { crossSite, readForm, refuseCrossSite } from './access.js';
import { href, html, type SafeHtml } from './html.js';
import { page, redirect, sendHtml } from './layout.js';
import type { View } from './view.js';
import { table } from './widgets.js';

/**
 * `/rehearsal/faults`: the active fault rules, a form that adds one (the rule shape `POST /__emulator/faults`
 * takes, checked by the same schema through the same FaultController) and a button that clears them.
 */

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const STATUSES = ['429', '500', '502', '503', '504'] as const;
const NUMBERS = [
  ['latencyMs', 'Latency (ms)'],
  ['jitterMs', 'Jitter (ms)'],
  ['retryAfterSeconds', 'Retry-After (s)'],
  ['resetRate', 'Reset rate (0..1)'],
  ['hangRate', 'Hang rate (0..1)'],
  ['hangMs', 'Hang length (ms)'],
  ['malformedRate', 'Malformed rate (0..1)'],
  ['times', 'At most this many times'],
] as const;

/** A number field as typed: a number when it reads as one, else the text (so the schema names the field). */
function numberOrText(raw: string): number | string {
  const n = Number(raw);
  return raw.trim() !== '' && Number.isFinite(n) ? n : raw;
}

/** The rule a form describes: only what was filled in, the rest left to the schema's defaults. */
export function ruleFromForm(form: URLSearchParams): FaultRuleInput {
  const json = form.get('json')?.trim();
  if (json) return JSON.parse(json) as FaultRuleInput;
  const rule: Record<string, unknown> = {};
  const route = form.get('route')?.trim();
  if (route) rule.route = route;
  const methods = form.getAll('methods');
  if (methods.length) rule.methods = methods;
  for (const [name] of NUMBERS) {
    const raw = form.get(name)?.trim();
    if (raw) rule[name] = numberOrText(raw);
  }
  const status = form.get('errorStatus');
  const rate = form.get('errorRate')?.trim();
  if (status && rate) rule.errors = { [status]: numberOrText(rate) };
  for (const name of ['body', 'message', 'malformedKind', 'phase']) {
    const value = form.get(name);
    if (value) rule[name] = value;
  }
  return rule as FaultRuleInput;
}

function describe(rule: FaultRule): string[] {
  const errors = Object.entries(rule.errors)
    .map(([s, p]) => `${s} × ${p}`)
    .join(', ');
  return [
    rule.route,
    rule.methods?.join(', ') ?? 'all',
    `${rule.latencyMs}${rule.jitterMs ? ` + 0..${rule.jitterMs}` : ''} ms`,
    errors
      ? `${errors} (Retry-After ${rule.retryAfterSeconds} s${rule.body === 'text' ? '' : `, ${rule.body} body`})`
      : '—',
    rule.resetRate ? String(rule.resetRate) : '—',
    rule.hangRate ? `${rule.hangRate} for ${rule.hangMs} ms` : '—',
    rule.malformedRate ? `${rule.malformedRate} ${rule.malformedKind}` : '—',
    rule.phase,
    rule.times === undefined ? 'unlimited' : String(rule.times),
  ];
}

/** A text field (numbers too: a typed "0,5" must reach the schema and be named, not be dropped by the browser). */
function field(form: URLSearchParams | undefined, name: string, label: string, numeric = false): SafeHtml {
  const id = `fault-${name}`;
  const extra = numeric ? html` inputmode="decimal"` : '';
  return html`<div class="field"><label for="${id}">${label}</label>
    <input id="${id}" name="${name}" type="text"${extra} value="${form?.get(name) ?? ''}"></div>`;
}

function choice(form: URLSearchParams | undefined, name: string, label: string, options: readonly string[]): SafeHtml {
  const id = `fault-${name}`;
  const value = form?.get(name) ?? '';
  return html`<div class="field"><label for="${id}">${label}</label><select id="${id}" name="${name}">
    <option value="">(default)</option>
    ${options.map((o) => html`<option value="${o}"${o === value ? html` selected` : ''}>${o}</option>`)}
  </select></div>`;
}

function addForm(form: URLSearchParams | undefined): SafeHtml {
  const checked = new Set(form?.getAll('methods') ?? []);
  return html`<form method="post" action="/rehearsal/faults" class="stack panel" aria-labelledby="add-heading">
    <h2 id="add-heading">Add a rule</h2>
    <input type="hidden" name="action" value="add">
    ${field(form, 'route', 'Route (path glob, default **)')}
    <fieldset><legend>Methods (none: all)</legend><div class="row">
      ${METHODS.map(
        (m) =>
          html`<label><input type="checkbox" name="methods" value="${m}"${checked.has(m) ? html` checked` : ''}> ${m}</label>`,
      )}
    </div></fieldset>
    <div class="row">
      ${choice(form, 'errorStatus', 'Error status', STATUSES)}
      ${field(form, 'errorRate', 'Error probability (0..1)', true)}
    </div>
    <div class="row">${NUMBERS.map(([name, label]) => field(form, name, label, true))}</div>
    <div class="row">
      ${choice(form, 'malformedKind', 'Malformed body', ['truncated', 'empty', 'html', 'wrong-types'])}
      ${choice(form, 'body', 'Error body', ['text', 'json', 'html'])}
      ${choice(form, 'phase', 'Phase of errors, resets and hangs', ['before', 'after'])}
    </div>
    <div class="field"><label for="fault-json">Or the whole rule as JSON (wins over the fields)</label>
      <textarea id="fault-json" name="json" rows="3">${form?.get('json') ?? ''}</textarea></div>
    <div><button class="primary" type="submit">Add the rule</button></div>
  </form>`;
}

function render(v: View, x: Exchange, status: number, notice?: SafeHtml, form?: URLSearchParams): void {
  const { rules, seed, used } = v.env.emu.faults.list();
  const rows = rules.map((rule, i) => {
    const cells = describe(rule);
    return html`<tr><th scope="row">${i + 1}</th>${cells.map((c) => html`<td>${c}</td>`)}<td>${used[i] ?? 0}</td></tr>`;
  });
  const main = html`<h1>Fault rules</h1>
    ${notice ?? ''}
    <p>Faults stand for the network or a proxy in front of the services: they act on service requests, never on these
      pages or <code>/__emulator/*</code>. Dice seed ${seed}. The same rules as <code>GET /__emulator/faults</code>.</p>
    <h2>Active rules</h2>
    ${table(
      'Active fault rules',
      ['#', 'Route', 'Methods', 'Latency', 'Errors', 'Reset', 'Hang', 'Malformed', 'Phase', 'Times', 'Applied'],
      rows,
      { wide: true, empty: 'No rules: every request is answered normally.' },
    )}
    ${
      rules.length
        ? html`<form method="post" action="/rehearsal/faults"><button class="danger" type="submit" name="action" value="clear">Clear all rules</button></form>`
        : ''
    }
    ${addForm(form)}`;
  sendHtml(
    x.res,
    x.method,
    status,
    page({ title: 'Fault rules', viewer: v.viewer, section: '/rehearsal/faults', main }),
  );
}

export async function faultsPage(v: View, x: Exchange): Promise<void> {
  if (x.method !== 'POST') {
    x.req.resume();
    const done = v.query.get('done');
    const notice =
      done === 'added'
        ? html`<p class="notice" role="status">Rule added.</p>`
        : done === 'cleared'
          ? html`<p class="notice" role="status">All rules removed.</p>`
          : undefined;
    return render(v, x, 200, notice);
  }
  if (crossSite(x)) return refuseCrossSite(x.req, x.res, v.viewer);
  const form = await readForm(x.req);
  if (!form) return render(v, x, 413, html`<p class="error" role="alert">The form is larger than 64 KiB.</p>`);
  if (form.get('action') === 'clear') {
    v.env.emu.faults.clear();
    return redirect(x.res, href('/rehearsal/faults', { done: 'cleared' }));
  }
  try {
    v.env.emu.faults.add(ruleFromForm(form));
  } catch (err) {
    const message =
      err instanceof ZodError
        ? err.issues
            .flatMap((i) =>
              i.code === 'unrecognized_keys'
                ? i.keys.map((k) => `${[...i.path, k].join('.')}: unknown field "${k}"`)
                : [`${i.path.join('.') || '(rule)'}: ${i.message}`],
            )
            .join('; ')
        : err instanceof SyntaxError
          ? `The JSON does not parse: ${err.message}`
          : (err as Error).message;
    return render(v, x, 400, html`<p class="error" role="alert">The rule was not added. ${message}</p>`, form);
  }
  redirect(x.res, href('/rehearsal/faults', { done: 'added' }));
}
