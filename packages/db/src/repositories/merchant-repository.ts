import type { Pool } from 'pg';
import { dateColumn, optionalDateColumn, runQuery, tagAsDatabaseError, type Row } from './pg-query';

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

  /** Turns settle protection off; the merchant's own minimum goes back to the default with it. */
  async clearSettleKey(address: string): Promise<MerchantRecord> {
    const rows = await runQuery(this.pool, {
      name: 'merchant_clear_key',
      text: `INSERT INTO merchants (address) VALUES ($1)
             ON CONFLICT (address) DO UPDATE SET settle_key_hash = NULL, settle_key_created_at = NULL, minimum_amount = NULL, updated_at = now()
             RETURNING *`,
      values: [address],
    });
    return merchantOf(rows[0]);
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
    const client = await this.pool.connect().catch((err) => Promise.reject(tagAsDatabaseError(err)));
    try {
      await client.query('BEGIN');
      // lock the merchant's rows so two rotations run one after the other
      await client.query('SELECT id FROM merchant_webhook_secrets WHERE merchant = $1 FOR UPDATE', [merchant]);
      await client.query(`UPDATE merchant_webhook_secrets SET retires_at = now() WHERE merchant = $1 AND retires_at > now()`, [merchant]);
      await client.query(
        `UPDATE merchant_webhook_secrets SET retires_at = now() + make_interval(secs => $2) WHERE merchant = $1 AND retires_at IS NULL`,
        [merchant, graceSeconds],
      );
      await client.query('INSERT INTO merchant_webhook_secrets (merchant, ciphertext) VALUES ($1, $2)', [merchant, ciphertext]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw tagAsDatabaseError(err);
    } finally {
      client.release();
    }
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
