import { DAY_MS, type EnvReader } from '../parsers';

export interface RetentionConfig {
  /** rejected verifications older than this are deleted */
  rejectedVerificationsMs: number;
  /** idempotency keys are deleted this long after they expire */
  expiredIdempotencyKeysMs: number;
  /** how often the retention job runs (once across the cluster) */
  intervalMs: number;
  /** a verified verification no settlement refers to is deleted this long after its authorization's validBefore */
  expiredVerificationsMs: number;
  /** ...and this long after it was made even if its authorization is still valid (a settle then asks for a new verify) */
  unsettledVerificationsMs: number;
  /** a failed settlement that moved no money is deleted (with its history, events and batch item) this long after it failed */
  failedSettlementsMs: number;
  /** a merchant with no settlement, settle key or minimum, unseen this long, is deleted with its webhook secrets */
  unusedMerchantsMs: number;
}

export function readRetention(reader: EnvReader): RetentionConfig {
  return {
    rejectedVerificationsMs: reader.integer('RETENTION_REJECTED_VERIFICATIONS_DAYS', 30, 1, 3650) * DAY_MS,
    expiredIdempotencyKeysMs: reader.integer('RETENTION_EXPIRED_IDEMPOTENCY_HOURS', 24, 0, 24 * 365) * 60 * 60 * 1000,
    intervalMs: reader.integer('RETENTION_INTERVAL_MS', 60 * 60 * 1000, 1_000, DAY_MS),
    expiredVerificationsMs: reader.integer('RETENTION_EXPIRED_VERIFICATIONS_HOURS', 24, 0, 24 * 365) * 60 * 60 * 1000,
    unsettledVerificationsMs: reader.integer('RETENTION_UNSETTLED_VERIFICATIONS_DAYS', 30, 1, 3650) * DAY_MS,
    failedSettlementsMs: reader.integer('RETENTION_FAILED_SETTLEMENTS_DAYS', 90, 1, 3650) * DAY_MS,
    unusedMerchantsMs: reader.integer('RETENTION_UNUSED_MERCHANTS_DAYS', 90, 1, 3650) * DAY_MS,
  };
}
