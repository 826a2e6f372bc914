// Each abuse test records its attack and what it observed; `npm run test:abuse` turns the records into
// the "Abuse" section of RELIABILITY.md (write-report.ts).
import path from 'node:path';
import { ScenarioReport } from '../reliability/scenario-report';

export const ABUSE_RESULTS_DIR = path.join(__dirname, 'results');

/** A scenario report kept apart from the reliability scenarios' records. */
export function abuseReport(id: string, title: string, attack: string): ScenarioReport {
  return new ScenarioReport(id, title, attack, ABUSE_RESULTS_DIR);
}
