// PaymentIdentifierRepository and the public lookups against a real, migrated Postgres: an id binds to the
// first payment for good, racing processes agree on it, ids are per network and merchant, and every
// lookup is served by an index.
import { randomBytes } from 'node:crypto';
import { createPgPool, type Pool } from '../pg-pool';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { PaymentIdentifierRepository, type PaymentIdentifierBinding } from './payment-identifier-repository';

let db: TestDatabase;
let repo: PaymentIdentifierRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new PaymentIdentifierRepository(db.pool);
});
afterAll(async () => {
  await db?.drop();
});

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
const binding = (fields: Partial<PaymentIdentifierBinding> = {}): PaymentIdentifierBinding => ({
  chainId: 84532,
  paymentId: `pay_${randomBytes(16).toString('hex')}`,
  merchant: hex(20),
  authorizationFingerprint: randomBytes(32).toString('hex'),
  tokenAddress: hex(20),
  payer: hex(20),
  nonce: hex(32),
  ...fields,
});

describe('PaymentIdentifierRepository.bind', () => {
  it('binds an id to its first payment, answers it again for the same one and for another one', async () => {
    const first = binding();
    expect(await repo.bind(first)).toBe(first.authorizationFingerprint);
    expect(await repo.bind(first)).toBe(first.authorizationFingerprint);
    const other = binding({ paymentId: first.paymentId, merchant: first.merchant });
    expect(await repo.bind(other)).toBe(first.authorizationFingerprint);
  });

  it('scopes ids per merchant and per network', async () => {
    const first = binding();
    await repo.bind(first);
    const otherMerchant = binding({ paymentId: first.paymentId });
    expect(await repo.bind(otherMerchant)).toBe(otherMerchant.authorizationFingerprint);
    const otherNetwork = binding({ paymentId: first.paymentId, merchant: first.merchant, chainId: 8453 });
    expect(await repo.bind(otherNetwork)).toBe(otherNetwork.authorizationFingerprint);
  });

  it('two processes racing with one id and different payments agree on the one that won', async () => {
    // separate pools: separate connections, as two API processes have
    const pools: Pool[] = [createPgPool(db.url, 8), createPgPool(db.url, 8)];
    try {
      const repos = pools.map((p) => new PaymentIdentifierRepository(p));
      for (let round = 0; round < 5; round++) {
        const shared = binding();
        const contenders = Array.from({ length: 16 }, () => binding({ paymentId: shared.paymentId, merchant: shared.merchant, chainId: shared.chainId, nonce: hex(32) }));
        const answers = await Promise.all(contenders.map((c, i) => repos[i % 2].bind(c)));
        expect(new Set(answers).size).toBe(1);
        expect(contenders.map((c) => c.authorizationFingerprint)).toContain(answers[0]);
        const { rows } = await db.pool.query('SELECT authorization_fingerprint FROM payment_identifiers WHERE payment_id = $1', [shared.paymentId]);
        expect(rows).toEqual([{ authorization_fingerprint: answers[0] }]);
      }
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});

describe('public lookups use an index', () => {
  // with sequential scans off, the planner names the index it can use; a query no index serves would
  // still plan a sequential scan (at a huge cost) and fail this
  async function planOf(sql: string, values: unknown[]): Promise<string> {
    const client = await db.pool.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const { rows } = await client.query(`EXPLAIN ${sql}`, values);
      return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    } finally {
      await client.query('RESET enable_seqscan');
      client.release();
    }
  }

  it('by transaction, by payer and nonce, and by payment identifier', async () => {
    const tx = await planOf('SELECT * FROM settlements WHERE chain_id = $1 AND settlement_tx_hash = $2 AND settlement_tx_hash IS NOT NULL', [84532, hex(32)]);
    expect(tx).toContain('settlements_chain_id_settlement_tx_hash_idx');
    expect(tx).not.toContain('Seq Scan');
    const payerNonce = await planOf('SELECT * FROM settlements WHERE chain_id = $1 AND token_address = $2 AND payer = $3 AND nonce = $4', [84532, hex(20), hex(20), hex(32)]);
    // by token today; by nonce space once the readers move to it (the two indexes live side by side until then)
    expect(payerNonce).toMatch(/settlements_chain_id_(token_address|nonce_space)_payer_nonce_idx/);
    const byId = await planOf(
      `SELECT s.* FROM payment_identifiers p JOIN settlements s ON s.chain_id = p.chain_id AND s.token_address = p.token_address
         AND s.payer = p.payer AND s.nonce = p.nonce AND s.authorization_fingerprint = p.authorization_fingerprint
       WHERE p.chain_id = $1 AND p.payment_id = $2`,
      [84532, 'pay_0123456789abcdef'],
    );
    expect(byId).toContain('payment_identifiers_pkey');
    expect(byId).toContain('settlements_chain_id_token_address_payer_nonce_idx');
    expect(byId).not.toContain('Seq Scan');
  });
});
