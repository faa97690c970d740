// Prints the failed tests of the JUnit reports named on the command line, with their diffs and what they printed,
// last in CI's log: a CI log shows only its tail.
import { readFileSync } from 'node:fs';

const fromXml = (s) =>
  s.replace(/&(lt|gt|quot|apos|amp|#(\d+));/g, (_, name, code) =>
    code ? String.fromCodePoint(Number(code)) : { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' }[name],
  );
const lines = (text, max) =>
  fromXml(text)
    .split('\n')
    .filter((l) => l.trim() && !l.includes('node_modules'))
    .slice(0, max)
    .map((l) => `      ${l.slice(0, 400)}`)
    .join('\n');

for (const file of process.argv.slice(2)) {
  let xml;
  try {
    xml = readFileSync(file, 'utf8');
  } catch {
    console.log(`casebridge: no report at ${file} (its Vitest did not finish)`);
    continue;
  }
  for (const [, attrs, body] of xml.matchAll(/<testcase ([^>]*)>([\s\S]*?)<\/testcase>/g)) {
    const failure = /<(failure|error)[^>]*>([\s\S]*?)<\/\1>/.exec(body);
    if (!failure) continue;
    const attr = (n) => fromXml(new RegExp(`(?:^|\\s)${n}="([^"]*)"`).exec(attrs)?.[1] ?? '');
    console.log(`FAILED ${attr('classname')} > ${attr('name')}`);
    console.log(lines(failure[2], 80));
    const out = /<system-out>([\s\S]*?)<\/system-out>/.exec(body);
    if (out) console.log(`    it printed:\n${lines(out[1], 40)}`);
  }
}
