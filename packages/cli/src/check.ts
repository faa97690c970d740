/** One line of the doctor's report: ✓, ✗ (with the fix) or ! (only informative). */
export interface Check {
  name: string;
  ok: boolean;
  /** Only informative: shown with `!`, never fails the doctor. */
  warning?: boolean;
  detail: string;
  fix?: string;
}
