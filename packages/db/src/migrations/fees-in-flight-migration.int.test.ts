// Migration 20261128234500_merchant_fees_in_flight backfilled the kept sums (INSERT ... SELECT) before its trigger
// existed: a settlement that a running worker moved into collect_fee in between (a rolling deploy: the worker's
// transaction committed after the backfill's snapshot, before CREATE TRIGGER took its lock) was counted by
// neither, and the merchant's kept sum stayed short of its settlements' fees for good (reservations past its
// allowance). 20261129000500 sums them again under a lock on settlements.
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { createEmptyDatabase, type EmptyTestDatabase } from '../../../../test/support/database';
import { applyMigrations } from './apply-migrations';
import { findMigrationsDir } from './find-migrations-dir';

const MIGRATION = '20261128234500_merchant_fees_in_flight';
const TOKEN = '0x036cbd53842c5426634e7929541ec2318f3dcf7e';
const PAYER = '0x' + '11'.repeat(20);
const MERCHANT = '0x' + '22'.repeat(20);

let db: EmptyTestDatabase;
let before: string;
const clients: Client[] = [];

async function connect(): Promise<Client> {
  const client = new Client({ connectionString: db.url });
  await client.connect();
  clients.push(client);
  return client;
}

beforeAll(async () => {
  const all = findMigrationsDir();
  before = mkdtempSync(path.join(tmpdir(), 'migrations-before-'));
  for (const name of readdirSync(all)) if (name < MIGRATION) cpSync(path.join(all, name), path.join(before, name), { recursive: true });
  db = await createEmptyDatabase();
  await applyMigrations(db.url, { migrationsDir: before });
});

afterAll(async () => {
  for (const c of clients) await c.end().catch(() => undefined);
  await db?.drop();
  rmSync(before, { recursive: true, force: true });
});

it("keeps a settlement a running worker moved into collect_fee while the kept sums were backfilled", async () => {
  const owner = await connect();
  const settlement = (id: string, nonce: string, state: string, fee: string) => `
    INSERT INTO verifications (id, status, protocol_version, surface, chain_id, network, token_address, payer, merchant, amount, nonce, created_at, updated_at)
    VALUES ('ver_${id}', 'verified', 2, 'x402', 84532, 'eip155:84532', '${TOKEN}', '${PAYER}', '${MERCHANT}', '10000', '${nonce}', now(), now());
    INSERT INTO settlements (id, verification_id, surface, state, chain_id, token_address, payer, merchant, amount, nonce, fee_amount, created_at, updated_at)
    VALUES ('stl_${id}', 'ver_${id}', 'x402', '${state}', 84532, '${TOKEN}', '${PAYER}', '${MERCHANT}', '10000', '${nonce}', '${fee}', now(), now());`;
  await owner.query(settlement('in', '0x' + '01'.repeat(32), 'collect_fee', '500') + settlement('moving', '0x' + '02'.repeat(32), 'check_allowance', '700'));

  // a worker's reservation, under way when the deploy migrates
  const worker = await connect();
  await worker.query('BEGIN');
  await worker.query(`UPDATE settlements SET state = 'collect_fee' WHERE id = 'stl_moving'`);
  const migrating = applyMigrations(db.url);
  // the migration waits for the worker's lock on settlements (its backfill has run by then)
  for (let i = 0; ; i++) {
    const { rows } = await owner.query(`SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'settlements' AND NOT l.granted`);
    if (rows.length > 0) break;
    if (i > 400) throw new Error('the migration never waited for the worker');
    await sleep(25);
  }
  await worker.query('COMMIT');
  await migrating;

  const { rows: kept } = await owner.query(`SELECT in_flight::text FROM merchant_fees_in_flight WHERE merchant = $1`, [MERCHANT]);
  const { rows: summed } = await owner.query(`SELECT sum(fee_amount::numeric)::text AS n FROM settlements WHERE merchant = $1 AND state = 'collect_fee'`, [MERCHANT]);
  expect(summed[0].n).toBe('1200');
  expect(kept[0]?.in_flight).toBe('1200');
}, 30_000);
