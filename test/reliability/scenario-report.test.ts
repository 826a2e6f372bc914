// A report row is an assertion: save() writes the record and fails the test when a check did not hold.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ScenarioReport } from './scenario-report';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'scenario-report-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const record = (id: string) => JSON.parse(readFileSync(path.join(dir, `${id}.json`), 'utf8'));

it('saves a passing record without throwing', () => {
  const report = new ScenarioReport('ok', 'all hold', 'nothing', dir);
  report.check('equal', 1, 1);
  report.assert('at most', 'under 2', 1, true);
  expect(() => report.save()).not.toThrow();
  expect(record('ok').passed).toBe(true);
});

it('writes the record, then throws listing every failed row', () => {
  const report = new ScenarioReport('bad', 'one fails', 'something', dir);
  report.check('held', 0, 0);
  report.check('verified verifications kept', 1000, 1001);
  report.assert('back-off given', 'a retry_after', 'none', false);
  expect(() => report.save()).toThrow(/2 check\(s\) failed:\n {2}- verified verifications kept: expected 1000, observed 1001\n {2}- back-off given: expected a retry_after, observed none/);
  expect(record('bad').passed).toBe(false);
  expect(record('bad').checks).toHaveLength(3);
});

it('throws when nothing was checked (a report with no row asserts nothing)', () => {
  const report = new ScenarioReport('empty', 'nothing checked', 'nothing', dir);
  report.note('only a note');
  expect(() => report.save()).toThrow(/no check was recorded/);
  expect(record('empty').passed).toBe(false);
});
