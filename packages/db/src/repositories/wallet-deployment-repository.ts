import type { Pool } from '../pg-pool';
import { inTransaction, runQuery } from './pg-query';

export interface WalletDeploymentRequest {
  settlementId: string;
  chainId: number;
  /** lowercase */
  merchant: string;
  /** lowercase */
  factory: string;
  /** lowercase: the counterfactual wallet */
  wallet: string;
}

export interface WalletDeploymentLimits {
  /** deployments and failed probes of the merchant's payments in the window */
  perMerchant: number;
  /** deployments of the factory in the window (failed probes never count here) */
  perFactory: number;
  /** failed deploy-then-transfer probes of one counterfactual wallet (the payer) in the window */
  failedProbesPerWallet: number;
  windowMs: number;
}

export type WalletDeploymentReservation =
  | { reserved: true }
  | { reserved: false; limit: 'merchant' | 'factory' | 'wallet'; count: number; max: number };

/** Whether a deploy-then-transfer probe may run: refused once the wallet or the merchant used up its budget. */
export type WalletProbeAllowance = { allowed: true } | { allowed: false; limit: 'merchant' | 'wallet'; count: number; max: number };

const SQL = {
  // one reservation at a time per chain (a transaction-scoped advisory lock), so two cannot both see room for one
  lock: `SELECT pg_advisory_xact_lock(hashtext('wallet_deployments'), $1)`,
  existing: `SELECT 1 FROM wallet_deployments WHERE settlement_id = $1`,
  counts: `
    SELECT count(*) FILTER (WHERE merchant = $2)::int AS merchant_count,
           count(*) FILTER (WHERE factory = $3 AND NOT probe_failed)::int AS factory_count,
           count(*) FILTER (WHERE wallet = $5 AND probe_failed)::int AS wallet_count
      FROM wallet_deployments
     WHERE chain_id = $1 AND created_at > $4 AND (merchant = $2 OR factory = $3 OR (wallet = $5 AND probe_failed))`,
  probeCounts: `
    SELECT count(*) FILTER (WHERE merchant = $2)::int AS merchant_count,
           count(*) FILTER (WHERE wallet = $4 AND probe_failed)::int AS wallet_count
      FROM wallet_deployments
     WHERE chain_id = $1 AND created_at > $3 AND (merchant = $2 OR (wallet = $4 AND probe_failed)) AND settlement_id <> $5`,
  insert: `INSERT INTO wallet_deployments (settlement_id, chain_id, merchant, factory, wallet) VALUES ($1, $2, $3, $4, $5)`,
  // a settlement probes at most twice (planned, then again right before sending): its one row says it failed
  probeFailed: `
    INSERT INTO wallet_deployments (settlement_id, chain_id, merchant, factory, wallet, probe_failed) VALUES ($1, $2, $3, $4, $5, true)
    ON CONFLICT (settlement_id) DO UPDATE SET probe_failed = true`,
};

/**
 * Owner of `wallet_deployments`: the ERC-6492 wallet deployments our relayers may pay for. A settlement
 * reserves one before its deployment is sent, within the per-merchant and per-factory limits of a window,
 * so fresh salts cannot make the relayers deploy wallets without end.
 */
export class WalletDeploymentRepository {
  constructor(private readonly pool: Pool) {}

  /** Reserves a deployment for this settlement (again: already reserved, yes), unless a limit is reached. */
  async reserve(request: WalletDeploymentRequest, limits: WalletDeploymentLimits): Promise<WalletDeploymentReservation> {
    return inTransaction<WalletDeploymentReservation>(this.pool, async (client) => {
      await runQuery(client, { name: 'walletDeployments.lock', text: SQL.lock, values: [request.chainId] });
      if ((await runQuery(client, { name: 'walletDeployments.existing', text: SQL.existing, values: [request.settlementId] })).length > 0) {
        return { reserved: true };
      }
      const since = new Date(Date.now() - limits.windowMs);
      const [row] = await runQuery(client, {
        name: 'walletDeployments.counts',
        text: SQL.counts,
        values: [request.chainId, request.merchant, request.factory, since, request.wallet],
      });
      const merchantCount = row.merchant_count as number;
      const factoryCount = row.factory_count as number;
      const walletCount = row.wallet_count as number;
      let refusal: WalletDeploymentReservation | undefined;
      if (merchantCount >= limits.perMerchant) refusal = { reserved: false, limit: 'merchant', count: merchantCount, max: limits.perMerchant };
      else if (walletCount >= limits.failedProbesPerWallet) refusal = { reserved: false, limit: 'wallet', count: walletCount, max: limits.failedProbesPerWallet };
      else if (factoryCount >= limits.perFactory) refusal = { reserved: false, limit: 'factory', count: factoryCount, max: limits.perFactory };
      if (!refusal) {
        await runQuery(client, {
          name: 'walletDeployments.insert',
          text: SQL.insert,
          values: [request.settlementId, request.chainId, request.merchant, request.factory, request.wallet],
        });
      }
      return refusal ?? { reserved: true };
    });
  }

  /**
   * Whether this wallet's deploy-then-transfer probe may run for this merchant: a probe runs the stranger's
   * factory and wallet code on our endpoints, so the wallet's failed probes and the merchant's deployments and
   * failed probes of the window bound how often (the factory's count is left to deployments: see reserve).
   */
  async probeAllowance(request: WalletDeploymentRequest, limits: WalletDeploymentLimits): Promise<WalletProbeAllowance> {
    const since = new Date(Date.now() - limits.windowMs);
    // the settlement's own reservation (its probe runs again right before its deployment is sent) is not counted
    const [row] = await runQuery(this.pool, {
      name: 'walletDeployments.probeCounts',
      text: SQL.probeCounts,
      values: [request.chainId, request.merchant, since, request.wallet, request.settlementId],
    });
    const merchantCount = row.merchant_count as number;
    const walletCount = row.wallet_count as number;
    if (walletCount >= limits.failedProbesPerWallet) return { allowed: false, limit: 'wallet', count: walletCount, max: limits.failedProbesPerWallet };
    if (merchantCount >= limits.perMerchant) return { allowed: false, limit: 'merchant', count: merchantCount, max: limits.perMerchant };
    return { allowed: true };
  }

  /**
   * Records that this settlement's probe failed (the simulation refused the deployment or the transfer after
   * it, ran out of its gas, or did not finish): it counts against the merchant and the wallet, not the factory.
   * Replaces the settlement's reservation if it had one (its deployment is then never sent).
   */
  async recordFailedProbe(request: WalletDeploymentRequest): Promise<void> {
    await runQuery(this.pool, {
      name: 'walletDeployments.probeFailed',
      text: SQL.probeFailed,
      values: [request.settlementId, request.chainId, request.merchant, request.factory, request.wallet],
    });
  }

  /**
   * Gives back a settlement's reservation (its deployment was refused before anything was sent): the limits
   * count deployments our relayers paid for, so a stranger cannot use them up with refused ones. A failed
   * probe's row stays: it is what bounds the stranger's probes.
   */
  async release(settlementId: string): Promise<void> {
    await runQuery(this.pool, {
      name: 'walletDeployments.release',
      text: 'DELETE FROM wallet_deployments WHERE settlement_id = $1 AND NOT probe_failed',
      values: [settlementId],
    });
  }

  /**
   * Deletes up to `limit` reservations made before `before`: a reservation only counts within its window
   * (WALLET_DEPLOY_WINDOW_MS), so older ones are kept for nothing. Returns how many went.
   */
  async deleteOlderThan(before: Date, limit: number): Promise<number> {
    const rows = await runQuery(this.pool, {
      name: 'walletDeployments.deleteOlderThan',
      text: `WITH doomed AS (SELECT settlement_id FROM wallet_deployments WHERE created_at < $1 ORDER BY created_at LIMIT $2)
             DELETE FROM wallet_deployments w USING doomed d WHERE w.settlement_id = d.settlement_id RETURNING 1`,
      values: [before, limit],
    });
    return rows.length;
  }
}
