/** Jobs carry ids only: Postgres holds the records, so a job can never disagree with them. */
export interface SettlementJobData {
  settlementId: string;
}

export interface WebhookJobData {
  eventId: string;
}

/** A housekeeping run; the job name says which (e.g. "retention"). */
export type MaintenanceJobData = Record<string, never>;
