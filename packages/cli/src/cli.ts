import { main } from './main.js';

// The `casebridge` bin: the only file that acts when imported. Everything else is `main`, which tests call in process.
main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
});
