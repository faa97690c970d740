// Prints the failed tests of the JSON reports named on the command line, last in CI's log: a CI log shows only its tail.
import { readFileSync } from 'node:fs';

for (const file of process.argv.slice(2)) {
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    console.log(`casebridge: no report at ${file} (its Vitest did not finish)`);
    continue;
  }
  for (const suite of report.testResults ?? []) {
    const failed = (suite.assertionResults ?? []).filter((t) => t.status === 'failed');
    if (failed.length === 0 && suite.status !== 'failed') continue;
    console.log(`FAILED ${suite.name}${failed.length === 0 ? `: ${(suite.message ?? '').slice(0, 2000)}` : ''}`);
    for (const t of failed) {
      console.log(`  - ${t.fullName}`);
      for (const m of t.failureMessages ?? [])
        console.log(
          m
            .split('\n')
            .filter((l) => !l.includes('node_modules'))
            .slice(0, 80)
            .map((l) => `      ${l.slice(0, 300)}`)
            .join('\n'),
        );
    }
  }
}
