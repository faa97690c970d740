import PQueue from 'p-queue';
import type { ValidationError } from '../../client/errors.js';
import type { DefectFields } from '../config/defect-fields.js';

/**
 * Creates refused for their fields (createRunBug's 500, Jira's 400). Every defect carries the same `defects.fields`,
 * so after the first refusal none is created in the run (existing ones are still linked).
 */

export interface Refusal {
  /** What Jira said, field by field: `components: Component/s is required`. */
  what: string;
  /** The fix: the options to set or correct. */
  fix: string;
}

const PREFIX = /^Jira refused the defect's fields:\s*/i;

/** The fields a refusal names, with Jira's messages (empty when it names none). */
export function refusedFields(serverMessage: string): Array<{ id: string; message: string }> {
  return serverMessage
    .replace(PREFIX, '')
    .split(/;\s+/)
    .map((part) => /^([A-Za-z][\w.]*):\s*(.+)$/.exec(part.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ id: (m[1] ?? '').replace(/^fields\./, ''), message: (m[2] ?? '').trim().replace(/\.$/, '') }));
}

export class DefectRefusals {
  private first?: Refusal;
  /** One create at a time until the first has answered, so a refusal costs one request, not one per group. */
  private readonly creates = new PQueue({ concurrency: 1 });
  /** Case keys of the failures not filed, per refusal (`what (fix)`). */
  private readonly notFiled = new Map<string, { refusal: Refusal; keys: string[] }>();

  constructor(private readonly configured: DefectFields | undefined) {}

  /** The refusal that stops further creates in this run, if one happened. */
  get blocking(): Refusal | undefined {
    return this.first;
  }

  /** Runs a create in its turn: after the first answer, refused (then `blocking` stops the rest) or not, all at once. */
  inTurn<T>(create: () => Promise<T>): Promise<T> {
    return this.creates.add(async () => {
      try {
        return await create();
      } finally {
        this.creates.concurrency = Number.POSITIVE_INFINITY;
      }
    });
  }

  /** Whether the service's answer names fields of the create (Jira's `field: message`): a refusal of the fields. */
  namesFields(err: ValidationError): boolean {
    return refusedFields(err.serverMessage).length > 0;
  }

  /** A refusal naming fields, or a certain one (400), stops later creates; a bare 500 costs this defect only. */
  refused(err: ValidationError): Refusal {
    const fields = refusedFields(err.serverMessage);
    const given = new Set(Object.keys(this.configured ?? {}));
    const refusal: Refusal =
      fields.length > 0
        ? {
            what: `Jira refused its fields: ${fields.map((f) => `${f.id}: ${f.message}`).join('; ')}`,
            fix: `${fields
              .map((f) =>
                /cannot be set|not on the (?:appropriate )?screen/i.test(f.message) && given.has(f.id)
                  ? `remove defects.fields.${f.id}`
                  : `${given.has(f.id) ? 'correct' : 'set'} defects.fields.${f.id}`,
              )
              .join(', ')}, see doctor`,
          }
        : { what: `Jira refused it: ${err.serverMessage || err.message}`, fix: 'see doctor' };
    if (fields.length > 0 || !err.uncertain) this.first ??= refusal;
    return refusal;
  }

  /** One failure (of test case `key`) that got no defect because of `refusal`; once per failure. */
  noteNotFiled(refusal: Refusal, key: string): void {
    const id = `${refusal.what} (${refusal.fix})`;
    const entry = this.notFiled.get(id) ?? { refusal, keys: [] };
    entry.keys.push(key);
    this.notFiled.set(id, entry);
  }

  /** The run comment's note. */
  note(refusal: Refusal): string {
    return `Defect not filed: ${refusal.what} (${refusal.fix})`;
  }

  /** Problem lines for the summary: one per distinct refusal. */
  lines(): string[] {
    return [...this.notFiled.values()].map(({ refusal, keys }) => {
      if (keys.length === 1) return `defect for ${keys[0]} not filed: ${refusal.what} (${refusal.fix})`;
      // In key order, not in the order the failures came (which varies run to run): DEMO-2 before DEMO-10.
      const named = [...new Set(keys)].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
      const shown = named.slice(0, 3).join(', ') + (named.length > 3 ? `, ${named.length - 3} more` : '');
      const what = refusal.what.replace(/^Jira refused its /, 'Jira refused their ').replace(/ it: /, ' them: ');
      return `defects for ${keys.length} failures (${shown}) not filed: ${what} (${refusal.fix})`;
    });
  }
}
