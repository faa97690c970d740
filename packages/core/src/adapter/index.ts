/**
 * `@casebridge/core/adapter`: what every adapter must compute the same way. Node built-ins only, as a reporter
 * loads it before the engine. See docs/writing-an-adapter.md.
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
