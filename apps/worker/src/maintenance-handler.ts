import type { RetentionConfig } from '@facilitator/config';
import {
  type DiscoveryRepository,
  RETENTION_START,
  type IdempotencyRepository,
  type MerchantRepository,
  type RetentionCursor,
  type RetentionPage,
  type SettlementBatchRepository,
  type SettlementRetention,
  type VerificationRepository,
  type PaymentIdentifierRepository,
  type WalletDeploymentRepository,
  type WebhookEventRepository,
} from '@facilitator/db';
import type { Logger } from '@facilitator/logging';
import type { FinalityWatcher } from '@facilitator/settlement';
import { JobName, type MaintenanceJobData } from '@facilitator/queue';
import type { JobHandler } from './job-catalog';
import type { Sweeper } from './sweeper';

/** Rows deleted per statement, so one run never holds a long lock or a huge transaction. */
const BATCH = 1_000;

export interface RetentionDeps {
  verifications: Pick<VerificationRepository, 'rejectedPage' | 'unsettledPage' | 'deleteUnreferenced'>;
  settlements: Pick<SettlementRetention, 'failedPage' | 'deleteFailed'>;
  batches: Pick<SettlementBatchRepository, 'deleteItemsOfFailed'>;
  webhookEvents: Pick<WebhookEventRepository, 'deleteOfVerifications' | 'deleteOfSettlements'>;
  merchants: Pick<MerchantRepository, 'deleteUnusedPage' | 'deleteRetiredSecrets' | 'deleteExpiredNonces'>;
  idempotencyKeys: Pick<IdempotencyRepository, 'deleteExpired'>;
  walletDeployments: Pick<WalletDeploymentRepository, 'deleteOlderThan'>;
  paymentIdentifiers: Pick<PaymentIdentifierRepository, 'deleteUnsettled'>;
  /** the x402 bazaar catalog: resources not paid within `retentionMs` leave it (DISCOVERY_RETENTION_DAYS) */
  discovery?: { repository: Pick<DiscoveryRepository, 'deleteStale'>; retentionMs: number };
  /** WALLET_DEPLOY_WINDOW_MS: a deployment reservation counts this long, and is deleted after it */
  walletDeployWindowMs: number;
  retention: RetentionConfig;
  logger: Logger;
  now?: () => number;
}

/** What one run deleted, table by table (rows of the table each is named after). */
export interface RetentionResult {
  failedSettlements: number;
  unsettledVerifications: number;
  rejectedVerifications: number;
  unusedMerchants: number;
  retiredWebhookSecrets: number;
  merchantRequestNonces: number;
  idempotencyKeys: number;
  walletDeployments: number;
  paymentIdentifiers: number;
  /** catalog resources, payers and waiting declarations (only when the catalog is composed) */
  discoveryRows?: number;
}

/** Walks pages from the start to the end, deleting each page's rows (their dependants first) before the next. */
async function drain(page: (after: RetentionCursor) => Promise<RetentionPage>, remove: (ids: string[]) => Promise<number>): Promise<number> {
  let deleted = 0;
  for (let after: RetentionCursor | null = RETENTION_START; after; ) {
    const { ids, next } = await page(after);
    if (ids.length > 0) deleted += await remove(ids);
    after = next;
  }
  return deleted;
}

/** Calls `remove` until it deletes less than a batch. */
async function repeat(remove: (limit: number) => Promise<number>): Promise<number> {
  let deleted = 0;
  for (let n = BATCH; n === BATCH; deleted += n) n = await remove(BATCH);
  return deleted;
}

/**
 * Deletes what is only kept for a while (docs/decisions.md, "Retention"): everything a stranger can make
 * us store has an end. In bounded batches, each table through its owner, dependants first (foreign keys):
 * failed settlements that moved no money (with their events and batch items), then verifications no
 * settlement refers to that can never settle or are past the cap, rejected verifications (both with their
 * events), unused merchants with their secrets, rotated secrets that stopped signing, expired request
 * nonces and idempotency keys, ERC-6492 deployment reservations past their window, payment identifiers of
 * payments that never got a settlement. Settled settlements, failed ones that moved money, and their verifications
 * are kept for good.
 */
export async function runRetention(deps: RetentionDeps): Promise<RetentionResult> {
  const now = deps.now?.() ?? Date.now();
  const { retention: r, verifications, webhookEvents } = deps;
  const ago = (ms: number) => new Date(now - ms);

  const failedSettlements = await drain(
    (after) => deps.settlements.failedPage(ago(r.failedSettlementsMs), after, BATCH),
    async (ids) => {
      await webhookEvents.deleteOfSettlements(ids);
      await deps.batches.deleteItemsOfFailed(ids);
      return deps.settlements.deleteFailed(ids);
    },
  );
  const deleteVerifications = async (ids: string[]) => {
    await webhookEvents.deleteOfVerifications(ids);
    return verifications.deleteUnreferenced(ids);
  };
  const unsettled = { validBefore: BigInt(Math.floor((now - r.expiredVerificationsMs) / 1000)), createdBefore: ago(r.unsettledVerificationsMs) };
  const unsettledVerifications = await drain((after) => verifications.unsettledPage(unsettled, after, BATCH), deleteVerifications);
  const rejectedVerifications = await drain((after) => verifications.rejectedPage(ago(r.rejectedVerificationsMs), after, BATCH), deleteVerifications);

  let unusedMerchants = 0;
  for (let after: string | null = ''; after !== null; ) {
    const { deleted, next } = await deps.merchants.deleteUnusedPage(ago(r.unusedMerchantsMs), after, BATCH);
    unusedMerchants += deleted;
    after = next;
  }
  const retiredWebhookSecrets = await repeat((limit) => deps.merchants.deleteRetiredSecrets(new Date(now), limit));
  const merchantRequestNonces = await repeat((limit) => deps.merchants.deleteExpiredNonces(new Date(now), limit));
  const idempotencyKeys = await repeat((limit) => deps.idempotencyKeys.deleteExpired(ago(r.expiredIdempotencyKeysMs), limit));
  const walletDeployments = await repeat((limit) => deps.walletDeployments.deleteOlderThan(ago(deps.walletDeployWindowMs), limit));
  // as long as the verification that could have started a settlement of the payment
  const paymentIdentifiers = await repeat((limit) => deps.paymentIdentifiers.deleteUnsettled(ago(r.unsettledVerificationsMs), limit));

  // a declaration waits for its settlement at most a day (a settlement ends long before)
  const discoveryRows = deps.discovery ? await deps.discovery.repository.deleteStale(ago(deps.discovery.retentionMs), ago(24 * 60 * 60_000), BATCH) : undefined;

  const result = {
    ...(discoveryRows !== undefined ? { discoveryRows } : {}),
    failedSettlements,
    unsettledVerifications,
    rejectedVerifications,
    unusedMerchants,
    retiredWebhookSecrets,
    merchantRequestNonces,
    idempotencyKeys,
    walletDeployments,
    paymentIdentifiers,
  };
  if (Object.values(result).some((n) => n > 0)) deps.logger.info('retention run', { ...result });
  return result;
}

/** The scheduled housekeeping jobs (each run once across the cluster by its BullMQ job scheduler). */
export function maintenanceHandler(deps: RetentionDeps & { sweeper: Pick<Sweeper, 'sweep'>; finality: Pick<FinalityWatcher, 'run'> }): JobHandler<MaintenanceJobData> {
  return {
    concurrency: 1,
    async process(job) {
      if (job.name === JobName.Retention) return runRetention(deps);
      if (job.name === JobName.Sweep) return deps.sweeper.sweep();
      if (job.name === JobName.Finality) return deps.finality.run();
      throw new Error(`unknown maintenance job ${job.name}`);
    },
  };
}
