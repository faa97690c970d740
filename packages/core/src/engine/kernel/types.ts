import type { Timing } from './clock.js';
import type { Annotation, TestResult } from './model.js';

/** Which runner an adapter serves, named in summaries and defects; open (`'cypress'`); `junit` is the CLI. */
export interface RunnerInfo {
  name: 'playwright' | 'vitest' | 'jest' | 'junit' | (string & {});
  version?: string;
}

/** A test known before it runs: handed to `begin`, it lets the engine map keys and prepare runs up front. */
export interface PlannedTest {
  id: string;
  file: string;
  line?: number;
  titlePath: string[];
  project?: string;
  tags: string[];
  annotations: Annotation[];
}

/** Where the engine runs: the adapter fills this in; every field but `cwd` and `runner` is optional. */
export interface EngineContext {
  /** The project root: the mapping file, the config file and the journal are relative to it. */
  cwd: string;
  runner: RunnerInfo;
  env?: NodeJS.ProcessEnv;
  /** Where the summary and problems go (default: stderr). One call per block of text. */
  out?: (text: string) => void;
  /** Called as each journalled result of an earlier run settles (delivered or not): progress for `casebridge replay`. */
  onReplay?: (p: { done: number; total: number; key: string; ok: boolean }) => void;
  /** Folders files may be uploaded from besides the project folder (e.g. the folders of JUnit XML files). */
  attachmentRoots?: readonly string[];
  /** Where the options passed to `Engine.create` come from, for messages (default: `reporter options`). */
  optionsSource?: string;
  /** Options ranked above the config file and below `CASEBRIDGE_*` (replay: those the run recorded). */
  baseOptions?: { options: Record<string, unknown>; source: string };
  /** The shard of this process (`--shard=current/total`), named in the summary. */
  shard?: { current: number; total: number };
  /** Time runs this many times faster for the engine (its waits that much shorter): tests, not users. Default 1. */
  timeScale?: number;
  /** Waits of the table replaced, on that clock (tests: a window that must stay seconds long on a faster clock). */
  timing?: Partial<Timing>;
}

/** What `end()` resolves to. `failed` is true only when `failOnError` is set and something was not delivered. */
export interface EndResult {
  /** Only with `failOnError`: casebridge fails the test run. */
  failed: boolean;
  /** Why, in one line, when `failed`: the adapter prints it (or hands it to the runner as the error). */
  reason?: string;
  summary: RunSummary;
}

/** The end-of-run summary, as printed and as JSON (`casebridge replay --json`, the step summary). */
export interface RunSummary {
  enabled: boolean;
  mode: 'adhoc' | 'cycle';
  dryRun: boolean;
  /** The shard this process ran, when the runner was sharded. */
  shard?: { current: number; total: number };
  /** Results by final outcome (each mapped key counts once). */
  byStatus: Record<string, number>;
  results: number;
  delivered: number;
  /** The Jira base URL the results went to (links are built from it). */
  url?: string;
  cycle?: { name: string; id: number; plan: string; url?: string };
  /**
   * Failures the cap left without a defect (`notFiled`, why in `notFiledReason`) and their groups, largest first.
   * Absent when every failure got one.
   */
  defects: {
    created: string[];
    linked: string[];
    notFiled?: number;
    notFiledReason?: string;
    notFiledGroups?: Array<{ label: string; tests: number }>;
  };
  /** The failed tests with a case key, in the order they ended (at most 200; `failuresOmitted` counts the rest). */
  failures?: FailureLine[];
  failuresOmitted?: number;
  /**
   * Absent when never read. `failed`/`passed`: quarantined cases that failed / all passed (can be lifted); `marked`:
   * tests run expected-to-fail; `problem`: why it was not read.
   */
  quarantine?: { label: string; failed: string[]; passed: string[]; marked: number; problem?: string };
  /** Option `select`: the cycle, filters and counts, selected cases no test maps; `problem`: why it was not applied. */
  selection?: {
    plan: string;
    cycle: string;
    cycleId?: number;
    filters: string[];
    cases: number;
    tests: number;
    selected: number;
    uncovered: string[];
    problem?: string;
  };
  attachments: { uploaded: number; skipped: string[]; stored: string[] };
  unmapped: string[];
  /** Test cases this run created (autoCreate); their keys are in the mapping file. */
  createdCases: string[];
  /** Cases this run created while another machine created the same test's case first: the older one was used. */
  duplicateCases?: Array<{ key: string; kept: string }>;
  /** The mapping file (relative to the project root). */
  mappingFile?: string;
  /** Problems found at preflight or during delivery, one line each. */
  problems: string[];
  /** Results written to the journal for a later run or `casebridge replay`. */
  journaled: number;
  /** Failures whose run has its status but whose classification and defect could not be written (Jira failed). */
  undecided?: { keys: string[]; reason: string };
  /** The requirements this run's tests named, the case links made and what could not be linked. */
  requirements?: { requirements: number; linked: number; problems: string[] };
  /** Where the cycle's report went (pull request, commit), one line a code host: a failure to post is a warning. */
  published?: Array<{ ok: boolean; line: string }>;
  journalDir?: string;
  /** What dry run would have sent, one line per call. */
  calls?: string[];
  /** Results of earlier runs taken from the journal and delivered (or tried) in this one. */
  replayed?: number;
  /** Why delivery stopped early (the service was down, refused the credentials...). */
  serviceDown?: string;
}

/**
 * A failing or flaky result by its case's history: `new`, `known` (failed the same way, or an open known bug),
 * `flaky` (passed on retry, or flips), `regression` (its known bug closed), `quarantined` (no new defect).
 */
export type Classification = 'new' | 'known' | 'flaky' | 'regression' | 'quarantined';

/** A failed test in the summary, with links to what a person opens next (absent in a dry run's stand-ins). */
export interface FailureLine {
  /** `file > describe > title`. */
  test: string;
  file: string;
  line?: number;
  key: string;
  /** The first line of the first error. */
  message?: string;
  /** The error's meaningful lines after the first (a matcher's Expected and Received). */
  details?: string[];
  runId?: number;
  defect?: string;
  /** The defect was filed by this run (not an existing one linked). */
  defectCreated?: boolean;
  /** What the case's execution history says of this failure (option `history`); absent when it could not be read. */
  classification?: Classification;
  caseUrl?: string;
  runUrl?: string;
  defectUrl?: string;
}

export type { TestResult };

/** A test cycle as the engine knows it. */
export interface CycleInfo {
  id: number;
  name: string;
  plan: string;
  status: string;
  /** This process created it (false: another process did first; absent: it was there already). */
  created?: boolean;
  /** This process created it with a run for every case of the plan (`preloadRuns`): its run list is not empty. */
  preloaded?: boolean;
  /** This run resumed it (someone completed or aborted it): it completes it again at the end. */
  resumed?: boolean;
  /** When it was started (the service's `cycleStartedDate`, epoch ms), when the list said. */
  startedAt?: number;
  /**
   * Another process reports into it now (a matrix of jobs on one suite): their failures may share a group, so
   * defects.ts waits before filing one.
   */
  shared?: boolean;
}
