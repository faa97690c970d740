/**
 * What Playwright is doing, from its command line: the reporter API names no mode, and the option Playwright passes
 * (`_mode`) is private. `list` for `playwright test --list` (the VS Code extension and `casebridge doctor` list tests
 * so: nothing runs, nothing is reported), `merge` for `playwright merge-reports` (results of runs already made),
 * `test` otherwise.
 */
export function modeOf(argv: readonly string[]): 'test' | 'list' | 'merge' {
  if (argv.includes('merge-reports')) return 'merge';
  if (argv.includes('--list')) return 'list';
  return 'test';
}
