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

  /** Records a check and returns whether it held; the test still asserts it with expect(). */
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

  save(): void {
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
