/**
 * `@casebridge/core/adapter`: what every adapter (a runner's reporter, the CLI's JUnit import) must compute the same
 * way, once: the test's identity, colour-free text and bounded output, the one-line problem printer. Node built-ins
 * only: a reporter's entry module loads it with the runtime API, before (and without) the engine. How to write an
 * adapter: docs/writing-an-adapter.md at the repository's root.
 */
export type {
  Annotation,
  Attempt,
  AttemptStatus,
  ResultAttachment,
  ResultError,
  ResultStep,
  SourceLocation,
  TestResult,
} from '../engine/kernel/model.js';
export type { PlannedTest, RunnerInfo } from '../engine/kernel/types.js';
export { FileNames, leavesRoot, relativeFile, stableId } from './identity.js';
export { problemPrinter } from './problem.js';
export {
  ANSI,
  MAX_CAUSES,
  OUTPUT_EXCERPT_CHARS,
  outputExcerpt,
  stackWithCauses,
  stripAnsi,
} from './text.js';
