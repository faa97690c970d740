import { z } from 'zod';

/**
 * How harsh the emulated Jira Data Center is. `realistic` (the default) does what a real cluster does, per the
 * public sources named in the package README; `ideal` is the kind stand-in the emulator used to be (one node, no
 * index lag, no result window, substring `~`). Every knob can be set on its own (the `jira` option, the CLI flags,
 * `PUT /__emulator/jira`); a knob given wins over the profile.
 */
export type Profile = 'realistic' | 'ideal';

/** The profile when none is given. */
export const DEFAULT_PROFILE: Profile = 'realistic';

export const jiraBehaviourSchema = z.strictObject({
  /** Largest page a search answers; a larger `maxResults` is clamped, and the answer's `maxResults` says so. */
  searchMaxResults: z.number().int().min(1).max(100_000),
  /** `startAt + maxResults` beyond this is refused or empty (OpenSearch's `max_result_window`); null: no window. */
  resultWindow: z.number().int().min(1).nullable(),
  /** Past the window: a 500 "Search limit exceeded" (`error`) or an empty page with the true `total` (`empty`). */
  resultWindowMode: z.enum(['error', 'empty']),
  /**
   * How long after a write a search sees it, ms: one number for every node or one per node (node1, node2, ...;
   * the last repeats). Until then a search answers the issue as it was (or not at all, when just created).
   */
  indexLagMs: z.union([z.number().int().min(0).max(3_600_000), z.array(z.number().int().min(0).max(3_600_000)).min(1)]),
  /** Simulated cluster nodes behind a load balancer (`ROUTEID` cookie); a session is valid on its own node only. */
  nodes: z.number().int().min(1).max(16),
  /** `~` as Jira's index does it (`tokenised`: words, stemmed, ANDed) or a case-insensitive `substring` test. */
  textSearch: z.enum(['tokenised', 'substring']),
  /** A personal access token sent as a Basic password is accepted (`true`) or a failed login (`false`, Jira DC). */
  patAsBasic: z.boolean(),
  /**
   * Failed Basic and session logins of a user in a row before Jira asks for a CAPTCHA; null: never. The seed's
   * `captchaAfterFailedLogins` wins over it.
   */
  captchaAfterFailedLogins: z.number().int().min(1).nullable(),
  /**
   * Most issues one bulk create (`POST /rest/api/2/issue/bulk`) takes; more are refused whole with a 400. 0: the
   * route answers 404, as behind a proxy that does not pass it.
   */
  bulkCreateMax: z.number().int().min(0).max(10_000),
  /**
   * How long Jira takes to create one issue, ms ("tens to a few hundred milliseconds on Data Center": the create,
   * its workflow, its index update): a request that creates issues is answered that much later per issue, each of a
   * bulk create included. Concurrent requests wait side by side, as a cluster's request threads do.
   */
  createMs: z.number().int().min(0).max(60_000),
});

export type JiraBehaviour = z.output<typeof jiraBehaviourSchema>;
export type JiraBehaviourInput = Partial<JiraBehaviour>;

export const PROFILES: Record<Profile, JiraBehaviour> = {
  realistic: {
    searchMaxResults: 100,
    resultWindow: 10_000,
    resultWindowMode: 'error',
    indexLagMs: 1000,
    nodes: 2,
    textSearch: 'tokenised',
    patAsBasic: false,
    captchaAfterFailedLogins: 3,
    bulkCreateMax: 50,
    createMs: 25,
  },
  ideal: {
    searchMaxResults: 1000,
    resultWindow: null,
    resultWindowMode: 'error',
    indexLagMs: 0,
    nodes: 1,
    textSearch: 'substring',
    patAsBasic: true,
    captchaAfterFailedLogins: null,
    bulkCreateMax: 1000,
    createMs: 0,
  },
};

/** The profile's behaviour with the given knobs over it; a bad knob throws naming it, the value and what fits. */
export function resolveBehaviour(profile: string | undefined, knobs: JiraBehaviourInput = {}): JiraBehaviour {
  const name = profile ?? DEFAULT_PROFILE;
  if (name !== 'realistic' && name !== 'ideal') {
    throw new Error(`profile must be 'realistic' or 'ideal', got ${JSON.stringify(profile)}`);
  }
  const defined = Object.fromEntries(Object.entries(knobs).filter(([, v]) => v !== undefined));
  const r = jiraBehaviourSchema.safeParse({ ...PROFILES[name], ...defined });
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => `jira.${i.path.join('.')}: ${i.message}`);
  throw new Error(`invalid Jira behaviour: ${problems.join('; ')}`);
}

/** The index lag of one node (0-based). */
export function lagOf(b: JiraBehaviour, node: number): number {
  const lag = b.indexLagMs;
  if (typeof lag === 'number') return lag;
  return lag[Math.min(node, lag.length - 1)] ?? 0;
}
