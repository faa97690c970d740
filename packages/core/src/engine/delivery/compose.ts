import { ForbiddenError, NotFoundError } from '../../client/errors.js';
import { withRules } from '../../client/operations.js';
import type { TestManagementClient } from '../../client/tm.js';
import type { Service } from '../kernel/service.js';
import type { CycleInfo } from '../kernel/types.js';
import { findCycle, resumeCycle } from './cycles.js';

/** Routes the older variant lacks (404): the call resolves `undefined`. Elsewhere a 404 is a missing thing. */
const OPTIONAL_ROUTES: Record<string, OptionalRoute> = {
  'runs.bulkStatusUpdate': 'bulkStatus',
  'attachments.getAttachmentDetails': 'attachments',
  'attachments.addToRun': 'attachments',
};
export type OptionalRoute = 'bulkStatus' | 'attachments';

/** The service as delivery talks to it: the rules below applied once, not at each call. */
export interface DeliveryService extends Service {
  /**
   * The client for writes to `cycle`'s runs: a cycle completed meanwhile (403) is resumed once and the call sent
   * again. `undefined` (ad hoc runs): the optional routes only.
   */
  inCycle(cycle: CycleInfo | undefined): TestManagementClient;
  /** Whether the service answered 404 on this optional route in this run (see OPTIONAL_ROUTES). */
  lacks(route: OptionalRoute): boolean;
}

/** Decorates the service once per run, its rules in one function per operation with the health counting. */
export function composeService(base: Service): DeliveryService {
  const missing = new Set<OptionalRoute>();
  const byCycle = new WeakMap<CycleInfo, TestManagementClient>();
  const tm = decorate(base, missing, undefined);
  return {
    ...base,
    tm,
    lacks: (route) => missing.has(route),
    inCycle: (cycle) => {
      if (!cycle) return tm;
      let client = byCycle.get(cycle);
      if (!client) {
        client = decorate(base, missing, cycle);
        byCycle.set(cycle, client);
      }
      return client;
    },
  };
}

function decorate(base: Service, missing: Set<OptionalRoute>, cycle: CycleInfo | undefined): TestManagementClient {
  return withRules(base.tm, (group, name) => {
    const optional = OPTIONAL_ROUTES[`${group}.${name}`];
    return {
      failed: async (err, again) => {
        if (optional && err instanceof NotFoundError) {
          missing.add(optional);
          return { answer: undefined };
        }
        if (again > 0 || !cycle || !(err instanceof ForbiddenError)) return undefined;
        // Refused because the cycle is no longer open (someone completed or aborted it): resumed, sent once more.
        const now = await findCycle(base, cycle.plan, cycle.name);
        if (!now || now.status === 'Active') return undefined;
        await resumeCycle(base, cycle);
        return 'again';
      },
    };
  });
}
