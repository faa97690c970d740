import type { CommandDefinition } from '../command-line.js';
import { coverage } from './coverage.js';
import { cycle } from './cycle.js';
import { demo } from './demo.js';
import { diff } from './diff.js';
import { doctor } from './doctor.js';
import { emulator } from './emulator.js';
import { failure } from './failure.js';
import { failures } from './failures.js';
import { flaky } from './flaky.js';
import { gate } from './gate.js';
import { history } from './history.js';
import { init } from './init.js';
import { junit } from './junit.js';
import { mcp } from './mcp.js';
import { publish } from './publish.js';
import { quarantine } from './quarantine.js';
import { replay } from './replay.js';
import { sync } from './sync.js';

/**
 * Every `casebridge` command, in the order of `casebridge --help`. A new command is a file in this folder that
 * exports its `defineCommand(...)`, and one line here; its help, its parsing and its place in the list follow.
 */
export const COMMANDS: readonly CommandDefinition[] = [
  init,
  demo,
  replay,
  junit,
  doctor,
  cycle,
  sync,
  failures,
  failure,
  history,
  flaky,
  diff,
  coverage,
  gate,
  publish,
  quarantine,
  mcp,
  emulator,
];
