import type { Pool } from 'pg';
import { dateColumn, inTransaction, optionalDateColumn, runCount, runQuery, tagAsDatabaseError, type Row } from './pg-query';

export interface MerchantRecord {
  /** lowercase */
  address: string;
  /** sha256 hex of the settle key; set means settle protection is on */
  settleKeyHash: string | null;
  /** the merchant's own minimum in token units; null: the service default */
  minimumAmount: string | null;
}

export interface StoredWebhookSecret {
  ciphertext: string;
  createdAt: Date;
  /** null: the current secret; otherwise it still signs until then */
  retiresAt: Date | null;
}

const merchantOf = (row: Row): MerchantRecord => ({
  address: row.address as string,
  settleKeyHash: (row.settle_key_hash as string | null) ?? null,
  minimumAmount: (row.minimum_amount as string | null) ?? null,
});

const secretOf = (row: Row): StoredWebhookSecret => ({
  ciphertext: row.ciphertext as string,
  createdAt: dateColumn(row.created_at),
  retiresAt: optionalDateColumn(row.retires_at),
});

const LIVE_SECRETS = `
  SELECT ciphertext, created_at, retires_at FROM merchant_webhook_secrets
   WHERE merchant = $1 AND (retires_at IS NULL OR retires_at > now())
   ORDER BY retires_at IS NULL DESC, created_at DESC`;

// Retention (docs/decisions.md, "Retention"). A merchant is unused when it asked for nothing that lasts
// (no settle key, no minimum), has no settlement (of any state), has no signed request in progress (a
// nonce), and nothing of it is newer than $2: its row (made, changed, last seen signing a request) and
// its newest webhook secret (made on first use, by a delivery to any URL a stranger gave, or by a rotation).
const UNUSED = `
  NOT EXISTS (SELECT 1 FROM merchants m WHERE m.address = a.address
                 AND (m.settle_key_hash IS NOT NULL OR m.minimum_amount IS NOT NULL
                      OR m.updated_at >= $2 OR m.created_at >= $2 OR m.last_seen_at >= $2))
  AND NOT EXISTS (SELECT 1 FROM merchant_webhook_secrets s WHERE s.merchant = a.address AND s.created_at >= $2)
  AND NOT EXISTS (SELECT 1 FROM settlements st WHERE st.merchant = a.address)
  AND NOT EXISTS (SELECT 1 FROM merchant_request_nonces n WHERE n.merchant = a.address)`;

// One page of every merchant we hold anything of (a row, secrets), by address after $1; the unused ones
// of it deleted with all their secrets, in one statement. Returns the page's last address and how many went.
const DELETE_UNUSED_PAGE = `
  WITH page AS (
    SELECT address FROM (
      (SELECT DISTINCT merchant AS address FROM merchant_webhook_secrets WHERE merchant > $1 ORDER BY merchant LIMIT $3)
      UNION
      (SELECT address FROM merchants WHERE address > $1 ORDER BY address LIMIT $3)
    ) candidates ORDER BY address LIMIT $3
  ), doomed AS (
    SELECT a.address FROM page a WHERE ${UNUSED}
  ), secrets AS (
    DELETE FROM merchant_webhook_secrets s USING doomed d WHERE s.merchant = d.address
  ), records AS (
    DELETE FROM merchants m USING doomed d WHERE m.address = d.address
  )
  SELECT (SELECT count(*) FROM page)::int AS walked, (SELECT max(address) FROM page) AS last,
         (SELECT count(*) FROM doomed)::int AS deleted`;

/**
 * Merchants' records, webhook secrets and request nonces, through plain `pg`. Every write that must not
 * race is one statement (an insert that loses to a concurrent one does nothing).
 */
export class MerchantRepository {
  constructor(private readonly pool: Pool) {}

  async find(address: string): Promise<MerchantRecord | null> {
    const rows = await runQuery(this.pool, { name: 'merchant_find', text: 'SELECT * FROM merchants WHERE address = $1', values: [address] });
    return rows.length > 0 ? merchantOf(rows[0]) : null;
  }

  async findBySettleKeyHash(hash: string): Promise<MerchantRecord | null> {
    const rows = await runQuery(this.pool, { name: 'merchant_by_key', text: 'SELECT * FROM merchants WHERE settle_key_hash = $1', values: [hash] });
    return rows.length > 0 ? merchantOf(rows[0]) : null;
  }

  /** Turns settle protection on with a new key hash (replacing any earlier key). */
  async setSettleKeyHash(address: string, hash: string): Promise<MerchantRecord> {
    const rows = await runQuery(this.pool, {
      name: 'merchant_set_key',
      text: `INSERT INTO merchants (address, settle_key_hash, settle_key_created_at) VALUES ($1, $2, now())
             ON CONFLICT (address) DO UPDATE SET settle_key_hash = $2, settle_key_created_at = now(), updated_at = now()
             RETURNING *`,
      values: [address, hash],
    });
    return merchantOf(rows[0]);
  }

  /**
   * Turns settle protection off; the merchant's own minimum goes back to the default with it. A merchant with
   * no record keeps having none: there is nothing to turn off, and nothing worth keeping (issue 40, 7d).
   */
  async clearSettleKey(address: string): Promise<MerchantRecord> {
    const rows = await runQuery(this.pool, {
      name: 'merchant_clear_key',
      text: `UPDATE merchants SET settle_key_hash = NULL, settle_key_created_at = NULL, minimum_amount = NULL, updated_at = now()
              WHERE address = $1 RETURNING *`,
      values: [address],
    });
    return rows.length > 0 ? merchantOf(rows[0]) : { address, settleKeyHash: null, minimumAmount: null };
  }

  /**
   * Sets the merchant's own minimum. When `needsProtection`, only while settle protection is on, decided
   * in the same statement as the write (a concurrent revoke cannot slip between check and write);
   * returns null when refused for that reason.
   */
  async setMinimum(address: string, minimum: string, needsProtection: boolean): Promise<MerchantRecord | null> {
    const rows = needsProtection
      ? await runQuery(this.pool, {
          name: 'merchant_set_minimum_protected',
          text: `UPDATE merchants SET minimum_amount = $2, updated_at = now() WHERE address = $1 AND settle_key_hash IS NOT NULL RETURNING *`,
          values: [address, minimum],
        })
      : await runQuery(this.pool, {
          name: 'merchant_set_minimum',
          text: `INSERT INTO merchants (address, minimum_amount) VALUES ($1, $2)
                 ON CONFLICT (address) DO UPDATE SET minimum_amount = $2, updated_at = now() RETURNING *`,
          values: [address, minimum],
        });
    return rows.length > 0 ? merchantOf(rows[0]) : null;
  }

  /** The current secret first, then one still in its grace period. */
  async liveSecrets(merchant: string): Promise<StoredWebhookSecret[]> {
    const rows = await runQuery(this.pool, { name: 'merchant_live_secrets', text: LIVE_SECRETS, values: [merchant] });
    return rows.map(secretOf);
  }

  /** Stores a first secret unless the merchant already has a current one (a concurrent first use won). */
  async insertSecretIfAbsent(merchant: string, ciphertext: string): Promise<void> {
    await runQuery(this.pool, {
      name: 'merchant_secret_first',
      text: `INSERT INTO merchant_webhook_secrets (merchant, ciphertext) VALUES ($1, $2)
             ON CONFLICT (merchant) WHERE retires_at IS NULL DO NOTHING`,
      values: [merchant, ciphertext],
    });
  }

  /**
   * Rotation: the current secret retires after `graceSeconds`, any older one at once (two live at most),
   * and the new one becomes current, in one transaction.
   */
  async rotateSecret(merchant: string, ciphertext: string, graceSeconds: number): Promise<void> {
    // every error of this transaction is the database's, as its statements are
    await inTransaction(this.pool, async (client) => {
      // lock the merchant's rows so two rotations run one after the other
      await client.query('SELECT id FROM merchant_webhook_secrets WHERE merchant = $1 FOR UPDATE', [merchant]);
      await client.query(`UPDATE merchant_webhook_secrets SET retires_at = now() WHERE merchant = $1 AND retires_at > now()`, [merchant]);
      await client.query(
        `UPDATE merchant_webhook_secrets SET retires_at = now() + make_interval(secs => $2) WHERE merchant = $1 AND retires_at IS NULL`,
        [merchant, graceSeconds],
      );
      await client.query('INSERT INTO merchant_webhook_secrets (merchant, ciphertext) VALUES ($1, $2)', [merchant, ciphertext]);
    }).catch((err: unknown) => {
      throw tagAsDatabaseError(err);
    });
  }

  /**
   * The merchant itself signed a request (it was authenticated): kept from retention for
   * RETENTION_UNUSED_MERCHANTS_DAYS from now, e.g. a merchant that read its webhook secret and waits for
   * its first payment. A record is made only for a merchant we already hold something of (a record, a webhook
   * secret): any fresh key can sign a request, so signing alone is not worth keeping (issue 40, 7d).
   */
  async markSeen(merchant: string): Promise<void> {
    await runQuery(this.pool, {
      name: 'merchant_mark_seen',
      text: `INSERT INTO merchants (address, last_seen_at)
             SELECT $1, now() WHERE EXISTS (SELECT 1 FROM merchant_webhook_secrets WHERE merchant = $1)
                                 OR EXISTS (SELECT 1 FROM merchants WHERE address = $1)
             ON CONFLICT (address) DO UPDATE SET last_seen_at = now()`,
      values: [merchant],
    });
  }

  /**
   * Retention: one page of merchants by address after `after` (`limit` of them), deleting the unused
   * ones (UNUSED, nothing newer than `before`) with their secrets. `next` is null once the walk is over.
   */
  async deleteUnusedPage(before: Date, after: string, limit: number): Promise<{ deleted: number; next: string | null }> {
    const [row] = await runQuery(this.pool, { name: 'merchant_delete_unused_page', text: DELETE_UNUSED_PAGE, values: [after, before, limit] });
    return { deleted: row.deleted as number, next: (row.walked as number) < limit ? null : (row.last as string) };
  }

  /** Retention: up to `limit` rotated secrets that stopped signing before `before`; returns how many went. */
  deleteRetiredSecrets(before: Date, limit: number): Promise<number> {
    return runCount(this.pool, {
      name: 'merchant_delete_retired_secrets',
      text: `DELETE FROM merchant_webhook_secrets WHERE id IN (
               SELECT id FROM merchant_webhook_secrets WHERE retires_at < $1 ORDER BY retires_at LIMIT $2)`,
      values: [before, limit],
    });
  }

  /** Retention: up to `limit` request nonces that expired before `before` (a signed request is refused after its expiry anyway). */
  deleteExpiredNonces(before: Date, limit: number): Promise<number> {
    return runCount(this.pool, {
      name: 'merchant_delete_expired_nonces',
      text: `DELETE FROM merchant_request_nonces WHERE (merchant, nonce) IN (
               SELECT merchant, nonce FROM merchant_request_nonces WHERE expires_at < $1 ORDER BY expires_at LIMIT $2)`,
      values: [before, limit],
    });
  }

  /** Records a signed request's nonce; false when it was used already (a replay). Expired ones are swept. */
  async useNonce(merchant: string, nonce: string, expiresAt: Date): Promise<boolean> {
    await runQuery(this.pool, { name: 'merchant_nonce_sweep', text: 'DELETE FROM merchant_request_nonces WHERE expires_at < now()', values: [] });
    const rows = await runQuery(this.pool, {
      name: 'merchant_nonce_use',
      text: `INSERT INTO merchant_request_nonces (merchant, nonce, expires_at) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING RETURNING nonce`,
      values: [merchant, nonce, expiresAt],
    });
    return rows.length > 0;
  }
}
