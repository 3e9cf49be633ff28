import type { CheckResult } from './doctor.js';

/** Width of the check-name column. */
const NAME_WIDTH = 10;
const MARKS: Readonly<Record<CheckResult['status'], string>> = { pass: 'ok  ', fail: 'FAIL', skip: 'skip' };

/** One check as `svc doctor` prints it: mark, name, figure, and on failure a `hint:` line. */
export function checkLines(result: CheckResult): string {
  const line = `${MARKS[result.status]}  ${result.name.padEnd(NAME_WIDTH)}${result.summary}`;
  return result.hint === undefined ? line : `${line}\n${' '.repeat(6 + NAME_WIDTH)}hint: ${result.hint}`;
}

/** The closing line: how many passed, failed and were skipped. */
export function summaryLine(results: CheckResult[]): string {
  const count = (status: CheckResult['status']): number => results.filter((result) => result.status === status).length;
  const failed = count('fail');
  const tail = count('skip') > 0 ? `, ${count('skip')} skipped` : '';
  return failed === 0 && tail === '' ? `all ${results.length} checks passed` : `${count('pass')} passed, ${failed} failed${tail}`;
}

/** `--json`: every result as one object. */
export function jsonReport(server: string, results: CheckResult[]): string {
  return JSON.stringify({ ok: results.every((result) => result.status === 'pass'), server, checks: results });
}
