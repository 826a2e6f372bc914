// Each reliability scenario records what it checked; `npm run test:reliability` turns the records
// into RELIABILITY.md (see write-report.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const RESULTS_DIR = path.join(__dirname, 'results');

export interface Check {
  what: string;
  expected: string;
  observed: string;
  ok: boolean;
}

export class ScenarioReport {
  private readonly checks: Check[] = [];
  private readonly notes: string[] = [];
  private readonly started = Date.now();

  constructor(
    readonly id: string,
    readonly title: string,
    readonly fault: string,
    private readonly resultsDir = RESULTS_DIR,
  ) {}

  /** Records a check and returns whether it held; save() fails the test when it did not. */
  check(what: string, expected: unknown, observed: unknown): boolean {
    const ok = JSON.stringify(expected) === JSON.stringify(observed);
    this.checks.push({ what, expected: String(expected), observed: String(observed), ok });
    return ok;
  }

  /** A check whose pass condition is not equality (e.g. "at most"). */
  assert(what: string, expected: string, observed: unknown, ok: boolean): boolean {
    this.checks.push({ what, expected, observed: String(observed), ok });
    return ok;
  }

  note(text: string): void {
    this.notes.push(text);
  }

  /** The checks that did not hold, each as one line. */
  failedChecks(): string[] {
    return this.checks.filter((c) => !c.ok).map((c) => `${c.what}: expected ${c.expected}, observed ${c.observed}`);
  }

  /**
   * Writes the record, then throws when any recorded check failed (or none was recorded): every row a
   * report prints is an assertion of its test, so a report can never say HARM or FAIL while the test
   * passes. Called from afterAll, it fails the test file all the same; call it after the hook's clean-up.
   */
  save(): void {
    this.write();
    const failed = this.failedChecks();
    if (this.checks.length === 0) throw new Error(`scenario ${this.id}: no check was recorded`);
    if (failed.length > 0) throw new Error(`scenario ${this.id}: ${failed.length} check(s) failed:\n${failed.map((f) => `  - ${f}`).join('\n')}`);
  }

  private write(): void {
    mkdirSync(this.resultsDir, { recursive: true });
    const record = {
      id: this.id,
      title: this.title,
      fault: this.fault,
      durationSeconds: Math.round((Date.now() - this.started) / 100) / 10,
      passed: this.checks.length > 0 && this.checks.every((c) => c.ok),
      checks: this.checks,
      notes: this.notes,
      at: new Date().toISOString(),
    };
    writeFileSync(path.join(this.resultsDir, `${this.id}.json`), JSON.stringify(record, null, 2));
  }
}
