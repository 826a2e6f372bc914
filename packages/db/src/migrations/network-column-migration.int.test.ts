// Migration 20261129060000_network_column (issue 42 item 5, step 3): every verification, settlement, chain
// transaction and fee counter gets `network`, the CAIP-2 id, from its chain id; a verification's name as the
// client wrote it moves to `network_name`. Rows stored before it are backfilled, and a process older than it
// (a rolling deploy) still writes complete rows.
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createEmptyDatabase, type EmptyTestDatabase } from '../../../../test/support/database';
import { applyMigrations } from './apply-migrations';
import { findMigrationsDir } from './find-migrations-dir';

const MIGRATION = '20261129060000_network_column';
const TOKEN = '0x036cbd53842c5426634e7929541ec2318f3dcf7e';
const PAYER = '0x' + '11'.repeat(20);
const MERCHANT = '0x' + '22'.repeat(20);

let db: EmptyTestDatabase;
let before: string;
let owner: Client;

// As a process older than the migration writes them: no `network` on settlements and chain transactions, and
// the client's name for the network in verifications.network.
const olderWriterRows = (id: string, nonce: string, state: string, txNonce: number) => `
  INSERT INTO verifications (id, status, protocol_version, surface, chain_id, network, token_address, payer, merchant, amount, nonce, created_at, updated_at)
  VALUES ('ver_${id}', 'verified', 1, 'v1', 84532, 'base-sepolia', '${TOKEN}', '${PAYER}', '${MERCHANT}', '10000', '${nonce}', now(), now());
  INSERT INTO settlements (id, verification_id, surface, state, chain_id, token_address, payer, merchant, amount, nonce, fee_amount, created_at, updated_at)
  VALUES ('stl_${id}', 'ver_${id}', 'v1', '${state}', 84532, '${TOKEN}', '${PAYER}', '${MERCHANT}', '10000', '${nonce}', '500', now(), now());
  INSERT INTO chain_transactions (id, settlement_id, purpose, chain_id, from_address, to_address, data, nonce, gas_limit, status, created_at, updated_at)
  VALUES ('ctx_${id}', 'stl_${id}', 'fee', 84532, '${PAYER}', '${TOKEN}', '0x', ${txNonce}, '21000', 'signed', now(), now());`;

async function networksOf(id: string) {
  const { rows } = await owner.query(
    `SELECT v.network AS verification, v.network_name, s.network AS settlement, t.network AS transaction
       FROM verifications v JOIN settlements s ON s.verification_id = v.id JOIN chain_transactions t ON t.settlement_id = s.id
      WHERE v.id = $1`,
    [`ver_${id}`],
  );
  return rows[0];
}

beforeAll(async () => {
  const all = findMigrationsDir();
  before = mkdtempSync(path.join(tmpdir(), 'migrations-before-'));
  for (const name of readdirSync(all)) if (name < MIGRATION) cpSync(path.join(all, name), path.join(before, name), { recursive: true });
  db = await createEmptyDatabase();
  await applyMigrations(db.url, { migrationsDir: before });
  owner = new Client({ connectionString: db.url });
  await owner.connect();
  await owner.query(olderWriterRows('old', '0x' + '01'.repeat(32), 'collect_fee', 1));
  await applyMigrations(db.url);
});

afterAll(async () => {
  await owner?.end().catch(() => undefined);
  await db?.drop();
  rmSync(before, { recursive: true, force: true });
});

it("backfills every row stored before it with its chain's CAIP-2 id, keeping the name the client wrote", async () => {
  expect(await networksOf('old')).toEqual({ verification: 'eip155:84532', network_name: 'base-sepolia', settlement: 'eip155:84532', transaction: 'eip155:84532' });
  const { rows } = await owner.query(`SELECT network, in_flight::text FROM merchant_fees_in_flight WHERE merchant = $1`, [MERCHANT]);
  expect(rows).toEqual([{ network: 'eip155:84532', in_flight: '500' }]);
});

it('makes the column required: a row with no network at all is refused', async () => {
  await expect(owner.query(`UPDATE settlements SET network = NULL WHERE id = 'stl_old'`)).rejects.toMatchObject({ code: '23502' });
});

it('completes the rows of a process older than it (a rolling deploy), and keeps the fee counters with their network', async () => {
  await owner.query(olderWriterRows('older_writer', '0x' + '02'.repeat(32), 'check_allowance', 2));
  expect(await networksOf('older_writer')).toEqual({ verification: 'eip155:84532', network_name: 'base-sepolia', settlement: 'eip155:84532', transaction: 'eip155:84532' });

  // the counters' trigger, replaced by the migration, still counts a move into collect_fee
  await owner.query(`UPDATE settlements SET state = 'collect_fee' WHERE id = 'stl_older_writer'`);
  const { rows } = await owner.query(`SELECT network, in_flight::text FROM merchant_fees_in_flight WHERE merchant = $1`, [MERCHANT]);
  expect(rows).toEqual([{ network: 'eip155:84532', in_flight: '1000' }]);
});

it("takes an older writer's row's network from its chain id, whatever network name the row carries", async () => {
  // an older process stores the client's name in `network`; a writer using that shape to name another chain's or
  // another family's network gets the name kept as written and the network of the row's chain
  for (const [id, written] of [['older_mainnet', 'eip155:1'], ['older_solana', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1']] as const) {
    await owner.query(
      `INSERT INTO verifications (id, status, protocol_version, surface, chain_id, network, created_at, updated_at)
       VALUES ($1, 'rejected', 1, 'v1', 84532, $2, now(), now())`,
      [`ver_${id}`, written],
    );
    const { rows } = await owner.query(`SELECT network, network_name FROM verifications WHERE id = $1`, [`ver_${id}`]);
    expect(rows[0]).toEqual({ network: 'eip155:84532', network_name: written });
  }
  // this version's shape with no network at all is refused, not completed (the trigger runs only for the older shape)
  await expect(
    owner.query(
      `INSERT INTO verifications (id, status, protocol_version, surface, chain_id, network, network_name, created_at, updated_at)
       VALUES ('ver_no_network', 'rejected', 2, 'x402', 84532, NULL, 'eip155:84532', now(), now())`,
    ),
  ).rejects.toMatchObject({ code: '23502' });
});

it("leaves a row of this version's writers as written", async () => {
  await owner.query(
    `INSERT INTO verifications (id, status, protocol_version, surface, chain_id, network, network_name, created_at, updated_at)
     VALUES ('ver_new', 'rejected', 2, 'x402', 84532, 'eip155:84532', 'eip155:84532', now(), now())`,
  );
  const { rows } = await owner.query(`SELECT network, network_name FROM verifications WHERE id = 'ver_new'`);
  expect(rows[0]).toEqual({ network: 'eip155:84532', network_name: 'eip155:84532' });
});

it("refuses a row whose network is not its chain's, in this version's shape (20261129063000)", async () => {
  // another EVM chain's network, and another family's, on a chain 84532 row: a second key for one payment
  for (const [id, network] of [['lying_mainnet', 'eip155:1'], ['lying_solana', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1']] as const) {
    await expect(
      owner.query(
        `INSERT INTO verifications (id, status, protocol_version, surface, chain_id, network, network_name, created_at, updated_at)
         VALUES ($1, 'rejected', 2, 'x402', 84532, $2, $2, now(), now())`,
        [`ver_${id}`, network],
      ),
    ).rejects.toMatchObject({ code: '23514' });
  }
  for (const table of ['verifications', 'settlements', 'chain_transactions', 'merchant_fees_in_flight']) {
    await expect(owner.query(`UPDATE ${table} SET network = 'eip155:1' WHERE chain_id = 84532`)).rejects.toMatchObject({ code: '23514' });
  }
});

it("keeps the counters' functions out of a session's temporary schema (as 20261129000500 set them)", async () => {
  const { rows } = await owner.query(
    `SELECT proname, array_to_string(proconfig, ',') AS config FROM pg_proc
      WHERE proname IN ('merchant_fees_in_flight_track', 'settlement_fees_in_flight_locked') ORDER BY proname`,
  );
  expect(rows).toEqual([
    { proname: 'merchant_fees_in_flight_track', config: 'search_path=public, pg_temp' },
    { proname: 'settlement_fees_in_flight_locked', config: 'search_path=public, pg_temp' },
  ]);
});
