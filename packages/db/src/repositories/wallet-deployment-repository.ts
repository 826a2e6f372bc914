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
  perMerchant: number;
  perFactory: number;
  windowMs: number;
}

export type WalletDeploymentReservation =
  | { reserved: true }
  | { reserved: false; limit: 'merchant' | 'factory'; count: number; max: number };

const SQL = {
  // one reservation at a time per chain (a transaction-scoped advisory lock), so two cannot both see room for one
  lock: `SELECT pg_advisory_xact_lock(hashtext('wallet_deployments'), $1)`,
  existing: `SELECT 1 FROM wallet_deployments WHERE settlement_id = $1`,
  counts: `
    SELECT count(*) FILTER (WHERE merchant = $2)::int AS merchant_count, count(*) FILTER (WHERE factory = $3)::int AS factory_count
      FROM wallet_deployments
     WHERE chain_id = $1 AND created_at > $4 AND (merchant = $2 OR factory = $3)`,
  insert: `INSERT INTO wallet_deployments (settlement_id, chain_id, merchant, factory, wallet) VALUES ($1, $2, $3, $4, $5)`,
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
        values: [request.chainId, request.merchant, request.factory, since],
      });
      const merchantCount = row.merchant_count as number;
      const factoryCount = row.factory_count as number;
      let refusal: WalletDeploymentReservation | undefined;
      if (merchantCount >= limits.perMerchant) refusal = { reserved: false, limit: 'merchant', count: merchantCount, max: limits.perMerchant };
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
   * Gives back a settlement's reservation (its deployment was refused before anything was sent): the limits
   * count deployments our relayers paid for, so a stranger cannot use them up with refused ones.
   */
  async release(settlementId: string): Promise<void> {
    await runQuery(this.pool, { name: 'walletDeployments.release', text: 'DELETE FROM wallet_deployments WHERE settlement_id = $1', values: [settlementId] });
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
