// Migration 20261125120000_payment_mechanisms on rows written before it: each gets its mechanism, scheme,
// nonce space and, when verified, the payload the EIP-3009 mechanism would have stored; the settlement the
// payload of its verification. The payload's shape is the one exact-eip3009's `toStored` writes (its unit
// test pins the same JSON), so settlement reads old and new rows alike.
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createEmptyDatabase, type EmptyTestDatabase } from '../../../../test/support/database';
import { applyMigrations } from './apply-migrations';
import { findMigrationsDir } from './find-migrations-dir';

const MIGRATION = '20261125120000_payment_mechanisms';
const TOKEN = '0x036cbd53842c5426634e7929541ec2318f3dcf7e';
const PAYER = '0x' + '11'.repeat(20);
const MERCHANT = '0x' + '22'.repeat(20);
const NONCE = '0x' + 'ab'.repeat(32);
const SIGNATURE = '0x' + 'a1'.repeat(32) + 'b2'.repeat(32) + '1b';

let db: EmptyTestDatabase;
let client: Client;
let before: string;

beforeAll(async () => {
  // the migrations up to this one, applied as a deployment that predates it had them
  const all = findMigrationsDir();
  before = mkdtempSync(path.join(tmpdir(), 'migrations-before-'));
  for (const name of readdirSync(all)) {
    if (name < MIGRATION) cpSync(path.join(all, name), path.join(before, name), { recursive: true });
  }
  db = await createEmptyDatabase();
  await applyMigrations(db.url, { migrationsDir: before });
  client = new Client({ connectionString: db.url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
  rmSync(before, { recursive: true, force: true });
});

it('backfills rows stored before it: the payload of a verified row is its authorization as signed, and the payment key is unchanged', async () => {
  const common = `'v1', 84532, 'eip155:84532', '${TOKEN}', '${PAYER}', '${MERCHANT}', '10000', '10000', '${NONCE}', '0', '4102444800'`;
  await client.query(`
    INSERT INTO verifications (id, status, protocol_version, surface, chain_id, network, token_address, payer, merchant, amount,
                               expected_amount, nonce, valid_after, valid_before, signature, created_at, updated_at)
    VALUES ('ver_ok', 'verified', 1, ${common}, '${SIGNATURE}', now(), now()),
           ('ver_no', 'rejected', 1, ${common}, NULL, now(), now()),
           ('ver_partial', 'verified', 1, 'v1', 84532, 'eip155:84532', '${TOKEN}', '${PAYER}', '${MERCHANT}', '10000', '10000', '${NONCE}', NULL, NULL, '${SIGNATURE}', now(), now())`);
  const paymentKey = `84532:${TOKEN}:${PAYER}:${NONCE}`;
  await client.query(`
    INSERT INTO settlements (id, verification_id, payment_key, surface, state, chain_id, token_address, payer, merchant, amount, nonce,
                             fee_amount, created_at, updated_at)
    VALUES ('stl_ok', 'ver_ok', '${paymentKey}', 'v1', 'pending', 84532, '${TOKEN}', '${PAYER}', '${MERCHANT}', '10000', '${NONCE}', '10000', now(), now())`);

  expect(await applyMigrations(db.url)).toEqual([MIGRATION, ...(await migrationsAfter(MIGRATION))]);

  const { rows: verifications } = await client.query('SELECT id, mechanism, scheme, nonce_space, payload FROM verifications ORDER BY id');
  const ok = verifications.find((v) => v.id === 'ver_ok');
  expect(verifications).toEqual([
    { id: 'ver_no', mechanism: 'exact/eip3009', scheme: 'exact', nonce_space: TOKEN, payload: null },
    {
      id: 'ver_ok',
      mechanism: 'exact/eip3009',
      scheme: 'exact',
      nonce_space: TOKEN,
      payload: { authorization: { from: PAYER, to: MERCHANT, value: '10000', validAfter: '0', validBefore: '4102444800', nonce: NONCE }, signature: SIGNATURE },
    },
    // a verified row without its validity gets no payload it could not be read from
    { id: 'ver_partial', mechanism: 'exact/eip3009', scheme: 'exact', nonce_space: TOKEN, payload: null },
  ]);
  const { rows: settlements } = await client.query('SELECT mechanism, scheme, nonce_space, payload, payment_key FROM settlements');
  expect(settlements).toEqual([{ mechanism: 'exact/eip3009', scheme: 'exact', nonce_space: TOKEN, payload: ok.payload, payment_key: paymentKey }]);
});

it('gives rows an older process writes (a rolling deploy) the EIP-3009 mechanism and scheme', async () => {
  await client.query(`
    INSERT INTO verifications (id, status, protocol_version, surface, chain_id, network, created_at, updated_at)
    VALUES ('ver_old_writer', 'rejected', 1, 'v1', 84532, 'eip155:84532', now(), now())`);
  const { rows } = await client.query(`SELECT mechanism, scheme, nonce_space, payload FROM verifications WHERE id = 'ver_old_writer'`);
  expect(rows).toEqual([{ mechanism: 'exact/eip3009', scheme: 'exact', nonce_space: null, payload: null }]);
});

async function migrationsAfter(name: string): Promise<string[]> {
  return readdirSync(findMigrationsDir())
    .filter((entry) => entry > name && !entry.endsWith('.toml'))
    .sort();
}
