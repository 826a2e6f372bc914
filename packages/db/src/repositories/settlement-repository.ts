import type { Pool, PoolClient } from 'pg';
import type { PrismaClient, Settlement, SettlementState } from '../generated/prisma/client';
import { dateColumn, inTransaction, optionalDateColumn, runCount, runQuery } from './pg-query';
import type { RetentionCursor, RetentionPage } from './retention-page';
import { WebhookEventRepository, type WebhookEventRow } from './webhook-event-repository';
import { optionalMs, windowRows, type StatusWindow, type WaitingCount, type WindowSettleOutcomes } from './status-windows';
import { NEWEST_FIRST, olderThan, type KeysetCursor } from './keyset';
import {
  NONCE_CONSUMING_STATES,
  settlementFromColumns,
  settlementWithVerificationFromColumns,
  UPDATE_COLUMNS,
  type ForeignExecutionBlock,
  type SettlementUpdate,
  type SettlementWithVerificationRow,
} from './settlement-row';
import type { PaymentNonce } from './payment-nonce';

export { NONCE_CONSUMING_STATES, type ForeignExecutionBlock, type SettlementUpdate, type SettlementWithVerificationRow } from './settlement-row';

/** A foreign execution the finality watcher watches (see foreignExecutionsAwaitingFinality). */
export interface ForeignExecutionWatch extends ForeignExecutionBlock {
  settlementId: string;
}

export type SettlementRow = Settlement;

/** The most settlements one public lookup answers (a payment has one live settlement; retries after failures add a few). */
export const LOOKUP_LIMIT = 20;

export interface TransitionRequest {
  id: string;
  from: SettlementState;
  to: SettlementState;
  data?: SettlementUpdate;
  note?: Record<string, unknown>;
  /** an event to store in the same database transaction, made from the settlement as the transition left it */
  event?: (moved: SettlementRow) => WebhookEventRow | undefined;
  /** only while the worker has not claimed the settlement for sending (a settle request stopping it) */
  onlyUnclaimed?: boolean;
  /**
   * States passed through on the way from `from` to `to`, in order, each with its history note: one statement
   * writes the row's final state and one history row per step (`note` is the last one's). For steps whose
   * outcome is known together (one transaction both collected the fee and paid the merchant).
   */
  through?: readonly TransitionHop[];
}

export interface TransitionHop {
  state: SettlementState;
  note?: Record<string, unknown>;
}


/** What starting a settlement stores; the rest of the row starts empty, in state `pending`. */
export interface NewSettlementRow {
  id: string;
  verificationId: string;
  paymentKey: string;
  surface: string;
  chainId: number;
  tokenAddress: string;
  payer: string;
  merchant: string;
  amount: string;
  nonce: string;
  /** the fingerprint of the authorization this settlement executes (authorizationFingerprint) */
  authorizationFingerprint: string;
  /** the payment's mechanism and scheme, the contract that records its nonce, and its stored payload, as on its verification */
  mechanism: string;
  scheme: string;
  nonceSpace: string;
  /** null only for a verification an older process stored during a rolling deploy (settlement rebuilds it from the columns) */
  payload: object | null;
  feeAmount: string;
  metadata?: object | null;
}

// One statement: the new settlement with its first history row, or the live settlement of the payment.
const CREATE_OR_GET = `
  WITH created AS (
    INSERT INTO settlements
      (id, verification_id, payment_key, surface, state, chain_id, token_address, payer, merchant, amount, nonce, fee_amount, metadata,
       authorization_fingerprint, mechanism, scheme, nonce_space, payload, created_at, updated_at)
    VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $15, $16, $17::jsonb, now(), now())
    ON CONFLICT (payment_key) DO NOTHING
    RETURNING *
  ), history AS (
    INSERT INTO settlement_transitions (settlement_id, from_state, to_state) SELECT id, NULL, 'pending' FROM created
  )
  SELECT *, true AS created FROM created
  UNION ALL
  SELECT *, false AS created FROM settlements WHERE payment_key = $3 AND NOT EXISTS (SELECT 1 FROM created)`;

// Nothing of it was claimed for sending, and (rows of a worker older than the claim, during a rolling deploy)
// nothing of it stored to be sent: no transaction of its own, no batch item.
// a settlement waiting for the confirmations of a transaction that already paid its merchant (someone else's:
// execution_confirming) is paid, not unsent: never stopped
const UNCLAIMED = `
         AND send_claimed_at IS NULL
         AND waiting_reason IS DISTINCT FROM 'execution_confirming'
         AND NOT EXISTS (SELECT 1 FROM chain_transactions t WHERE t.settlement_id = $1)
         AND NOT EXISTS (SELECT 1 FROM settlement_batch_items i WHERE i.settlement_id = $1)`;

// ordered locks, so two claims of overlapping sets cannot deadlock
const CLAIM_SEND = `
  UPDATE settlements s SET send_claimed_at = coalesce(s.send_claimed_at, now())
    FROM (SELECT id FROM settlements WHERE id = ANY($1::text[]) AND state NOT IN ('settled', 'failed') ORDER BY id FOR UPDATE) locked
   WHERE s.id = locked.id AND s.state NOT IN ('settled', 'failed')
  RETURNING s.id`;

/** The worker's side of transfer_decision: it may sign the transfer unless a settle request withheld it first. */
const CLAIM_TRANSFER = `
  UPDATE settlements SET transfer_decision = 'send'
   WHERE id = $1 AND transfer_decision IS DISTINCT FROM 'withheld' AND state NOT IN ('settled', 'failed')
  RETURNING id`;

/**
 * The settle request's side: a sequential settlement whose transfer the worker has not committed to (fee
 * claimed, in flight or mined) is withheld; already withheld (a repeated request) counts as withheld.
 */
const WITHHOLD_TRANSFER = `
  UPDATE settlements SET transfer_decision = 'withheld'
   WHERE id = $1 AND settlement_mode = 'sequential' AND state IN ('collect_fee', 'fee_collected')
     AND transfer_decision IS DISTINCT FROM 'send'
  RETURNING id`;

const FIND_WITH_VERIFICATION = `
  SELECT s.*, to_jsonb(v) AS verification FROM settlements s JOIN verifications v ON v.id = s.verification_id WHERE s.id = $1`;


/**
 * The state change, the fields written with it and the history row, as one statement (so one implicit
 * transaction): the worker's hot path makes five of these per settlement. One prepared statement per
 * combination of fields written, named by that combination.
 */
function transitionStatement(request: TransitionRequest): { name: string; text: string; values: unknown[] } {
  const { values, sets, mask } = transitionSets(request);
  const through = request.through && request.through.length > 0 ? request.through : undefined;
  let history = `SELECT id, $2::"SettlementState", $3::"SettlementState", $4::jsonb FROM moved`;
  if (through) {
    // one history row per step, oldest first (ids are taken in the ORDER BY's order): from -> through... -> to
    values.push(
      through.map((hop) => hop.state),
      through.map((hop) => (hop.note === undefined ? null : JSON.stringify(hop.note))),
    );
    const [states, notes] = [`$${values.length - 1}::text[]`, `$${values.length}::jsonb[]`];
    history = `
      SELECT moved.id, hop.from_state::"SettlementState", hop.to_state::"SettlementState", hop.note
        FROM moved, unnest(array_prepend($2::text, ${states}), array_append(${states}, $3::text), array_append(${notes}, $4::jsonb))
             WITH ORDINALITY AS hop(from_state, to_state, note, step)
       ORDER BY hop.step`;
  }
  const foreign = request.data?.foreignExecution;
  let watched = '';
  if (foreign) {
    // the transaction someone else sent is watched from the moment the settlement is settled on it, in the same statement
    values.push(foreign.txHash, foreign.blockNumber, foreign.blockHash);
    const n = values.length;
    watched = `, watched AS (
      INSERT INTO settlement_foreign_executions (settlement_id, chain_id, tx_hash, block_number, block_hash)
      SELECT id, chain_id, $${n - 2}, $${n - 1}, $${n} FROM moved
      ON CONFLICT (settlement_id) DO UPDATE SET tx_hash = EXCLUDED.tx_hash, block_number = EXCLUDED.block_number,
        block_hash = EXCLUDED.block_hash, final_at = NULL, updated_at = now()
    )`;
  }
  const text = `
    WITH moved AS (
      UPDATE settlements SET state = $3::"SettlementState", updated_at = now(),
             waiting_reason = NULL, waiting_since = NULL, waiting_detail = NULL${sets}
       WHERE id = $1 AND state = $2::"SettlementState"${request.onlyUnclaimed ? UNCLAIMED : ''} RETURNING *
    ), history AS (
      INSERT INTO settlement_transitions (settlement_id, from_state, to_state, note)
      ${history}
    )${watched}
    SELECT * FROM moved`;
  return {
    name: `settlement_transition_${mask}${request.onlyUnclaimed ? '_unclaimed' : ''}${through ? '_through' : ''}${foreign ? '_foreign' : ''}`,
    text,
    values,
  };
}

/** $1..$4 are id, from, to and note; then one parameter per field written. */
function transitionSets(request: TransitionRequest): { values: unknown[]; sets: string; mask: number } {
  const values: unknown[] = [request.id, request.from, request.to, request.note === undefined ? null : JSON.stringify(request.note)];
  const sets: string[] = [];
  let mask = 0;
  UPDATE_COLUMNS.forEach(([field, column], bit) => {
    const value = request.data?.[field];
    if (value === undefined) return;
    mask |= 1 << bit;
    values.push(field === 'errorDetails' && value !== null ? JSON.stringify(value) : value);
    sets.push(`, ${column} = $${values.length}${field === 'errorDetails' ? '::jsonb' : ''}`);
  });
  return { values, sets: sets.join(''), mask };
}

/**
 * The transition guarded by the fee reservation, in one statement: the merchant's fees in flight are read
 * under its advisory lock (settlement_fees_in_flight_locked, which holds it until this statement commits),
 * and the row moves only when they and this fee fit in what the merchant can spend. One round trip: the
 * lock is held for the database's work only, not across the worker's event loop (which, under load,
 * made the reservation a queue per merchant). Always one row: the fees in flight, and the moved row or nulls.
 */
function reservingTransitionStatement(request: TransitionRequest, reservation: FeeReservationRequest): { name: string; text: string; values: unknown[] } {
  const { values, sets, mask } = transitionSets(request);
  const at = values.length;
  const spendable = reservation.allowance < reservation.balance ? reservation.allowance : reservation.balance;
  values.push(
    `fee:${reservation.chainId}:${reservation.tokenAddress}:${reservation.merchant}`,
    reservation.merchant,
    reservation.chainId,
    reservation.tokenAddress,
    reservation.fee.toString(),
    spendable.toString(),
  );
  const [lockKey, merchant, chainId, token, fee, spend] = [1, 2, 3, 4, 5, 6].map((i) => `$${at + i}`);
  const payer = reservation.payer ? payerReservationSql(values, reservation, chainId, token) : undefined;
  const text = `
    WITH reserve AS MATERIALIZED (
      SELECT settlement_fees_in_flight_locked(${lockKey}, ${merchant}, ${chainId}::int, ${token}, $1) AS in_flight
    )${payer ? payer.cte : ''}, moved AS (
      UPDATE settlements SET state = $3::"SettlementState", updated_at = now(),
             waiting_reason = NULL, waiting_since = NULL, waiting_detail = NULL${sets}
       WHERE id = $1 AND state = $2::"SettlementState"
         AND (SELECT in_flight FROM reserve) + ${fee}::numeric <= ${spend}::numeric${payer ? payer.condition : ''}
       RETURNING *
    ), history AS (
      INSERT INTO settlement_transitions (settlement_id, from_state, to_state, note)
      SELECT id, $2::"SettlementState", $3::"SettlementState", $4::jsonb FROM moved
    )
    SELECT (SELECT in_flight FROM reserve)::text AS reservation_in_flight${payer ? payer.columns : ''}, moved.* FROM reserve LEFT JOIN moved ON true`;
  return { name: `settlement_reserving_transition_${mask}${payer ? '_payer' : ''}`, text, values };
}

/**
 * The payer's part of the reservation: its value in flight read under its own advisory lock, taken after
 * the merchant's (the LATERAL call depends on `reserve`, so it runs second), and the move allowed only when
 * this payment fits in the payer's balance on top of it (and, when capped, under its count of items in flight).
 */
function payerReservationSql(values: unknown[], reservation: FeeReservationRequest, chainId: string, token: string) {
  const payer = reservation.payer!;
  const at = values.length;
  values.push(
    `payer:${reservation.chainId}:${reservation.tokenAddress}:${payer.address}`,
    payer.address,
    payer.value.toString(),
    payer.balance.toString(),
    payer.maxInFlight ?? null,
    payer.pause?.since ?? new Date(),
    payer.pause?.afterFailures ?? null,
  );
  const [lockKey, address, value, balance, maxItems, since, pauseAfter] = [1, 2, 3, 4, 5, 6, 7].map((i) => `$${at + i}`);
  return {
    cte: `, payer_reserve AS MATERIALIZED (
      SELECT p.* FROM reserve, LATERAL settlement_payer_in_flight_locked(${lockKey}, ${address}, ${chainId}::int, ${token}, $1, ${since}::timestamptz) p
    )`,
    condition: `
         AND (SELECT in_flight FROM payer_reserve) + ${value}::numeric <= ${balance}::numeric
         AND (${maxItems}::int IS NULL OR (SELECT items FROM payer_reserve) < ${maxItems}::int)
         AND (${pauseAfter}::int IS NULL OR (SELECT failures FROM payer_reserve) < ${pauseAfter}::int)`,
    columns: `, (SELECT in_flight FROM payer_reserve)::text AS payer_in_flight, (SELECT items FROM payer_reserve) AS payer_items,
      (SELECT failures FROM payer_reserve) AS payer_failures, (SELECT last_failure_at FROM payer_reserve) AS payer_last_failure_at`,
  };
}

/** What the merchant can pay in fees right now, read from the chain just before reserving. */
export interface FeeReservationRequest {
  merchant: string;
  chainId: number;
  tokenAddress: string;
  fee: bigint;
  allowance: bigint;
  balance: bigint;
  /** the payer's side: this payment's value must fit in its balance on top of its value in flight */
  payer?: PayerReservationRequest;
}

/** What the payer can pay right now, read from the chain just before reserving. */
interface PayerReservationRequest {
  address: string;
  value: bigint;
  balance: bigint;
  /** at most this many of the payer's settlements in the sending states at once (absent: no cap) */
  maxInFlight?: number;
  /** refused when the payer has this many costly failures since `since` (read under its lock, see the migration) */
  pause?: { afterFailures: number; since: Date };
}

/** The payer's settlements in the sending states (collect_fee, fee_collected, executing), this one excluded. */
export interface PayerInFlight {
  value: bigint;
  items: number;
  /** its costly failures since the request's `pause.since` (0 without one), and the latest one's time */
  failures?: number;
  lastFailureAt?: Date | null;
}


// a fee transfer that was sent and reverted: failed with fee_collection_failed and a fee hash
// ...and its settlements settled on someone else's transaction after ours was sent (the transition's note names
// our_tx_hash) with no fee of ours: a merchant front-running our batch spends our gas and pays no fee, however
// often it does. Read from settlement_foreign_executions (rare rows) by its (chain_id, created_at) index.
const FEE_REVERTS_OF_MERCHANT = `
  SELECT count(*)::int AS reverts, max(at) AS last_at FROM (
    SELECT updated_at AS at FROM settlements
     WHERE merchant = $1 AND chain_id = $2 AND state = 'failed' AND error_code = 'fee_collection_failed'
       AND fee_tx_hash IS NOT NULL AND updated_at > $3
    UNION ALL
    SELECT f.created_at AS at FROM settlement_foreign_executions f JOIN settlements s ON s.id = f.settlement_id
     WHERE f.chain_id = $2 AND f.created_at > $3 AND s.merchant = $1 AND s.fee_collected_at IS NULL
       AND EXISTS (SELECT 1 FROM settlement_transitions t WHERE t.settlement_id = s.id AND t.to_state = 'settled' AND t.note ? 'our_tx_hash')
  ) spent`;

// ...and, on the atomic path, any item of a mined settle transaction that failed (its tx_hash is recorded):
// either way our gas was spent on the payment, and a payment released by it backs off before trying again
const FEE_REVERTS_OF_PAYMENT = `
  SELECT count(*)::int AS reverts, max(updated_at) AS last_at FROM settlements
   WHERE chain_id = $1 AND nonce_space = $2 AND payer = $3 AND nonce = $4 AND state = 'failed'
     AND ((error_code = 'fee_collection_failed' AND fee_tx_hash IS NOT NULL)
          OR (settlement_mode = 'atomic' AND error_details ? 'tx_hash'))`;

// Retention (docs/decisions.md, "Retention"): failed settlements that moved no money (no fee collected,
// the merchant not paid) and wait for no operator, failed before $1, oldest first after the cursor; the
// partial index on (updated_at) of exactly those keeps the walk to them. Settled ones, and failed ones
// that moved money, are the merchant's record and are kept.
const FAILED_PAGE = `
  SELECT id, updated_at FROM settlements
   WHERE state = 'failed' AND fee_collected_at IS NULL AND merchant_paid = false AND updated_at < $1
     AND updated_at >= $2 AND (updated_at > $2 OR id > $3) AND attention_at IS NULL
     AND NOT (coalesce(error_details, '{}'::jsonb) ? 'authorization_used_by')
   ORDER BY updated_at, id LIMIT $4`;

// Their history with them; checked again as it deletes. Their webhook events and batch items go first
// (WebhookEventRepository, SettlementBatchRepository): one left keeps the settlement.
const DELETE_FAILED = `
  WITH doomed AS (
    SELECT s.id FROM settlements s
     WHERE s.id = ANY($1::text[]) AND s.state = 'failed' AND s.fee_collected_at IS NULL AND s.merchant_paid = false
       AND s.attention_at IS NULL
       -- the payment was made by someone else's transaction: the merchant was paid, the record stays
       AND NOT (coalesce(s.error_details, '{}'::jsonb) ? 'authorization_used_by')
       AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.settlement_id = s.id)
       AND NOT EXISTS (SELECT 1 FROM settlement_batch_items i WHERE i.settlement_id = s.id)
  ), history AS (
    DELETE FROM settlement_transitions t USING doomed d WHERE t.settlement_id = d.id
  )
  DELETE FROM settlements s USING doomed d WHERE s.id = d.id`;

// Costly failures (the payer's payments that failed on chain at our or the merchant's expense) are defined
// once, by the SQL function settlement_costly_failure (migration 20261124150300_accounting_payer_in_flight).
// A costly failure always carries one of our transactions: written out, the condition lets the planner read
// only those (the partial indexes of migration 20261124150300), not the failures a stranger makes for free.
const SENT = `(fee_tx_hash IS NOT NULL OR settlement_tx_hash IS NOT NULL OR error_details ? 'tx_hash' OR error_details ? 'wallet_deploy_tx_hash')`;



// both counts in one statement: every settle request and every check_allowance asks them together
const FAILURES_OF_PAYMENT = `
  SELECT p.failures AS payer_failures, p.last_at AS payer_last_at, m.failures AS merchant_failures, m.last_at AS merchant_last_at
    FROM (SELECT count(*)::int AS failures, max(updated_at) AS last_at FROM settlements
           WHERE payer = $1 AND chain_id = $3 AND state = 'failed' AND ${SENT} AND updated_at > $4 AND settlement_costly_failure(settlements)) p,
         (SELECT count(*)::int AS failures, max(updated_at) AS last_at FROM settlements
           WHERE merchant = $2 AND chain_id = $3 AND state = 'failed' AND ${SENT} AND updated_at > $4 AND settlement_costly_failure(settlements)) m`;

export interface FeeReverts {
  count: number;
  lastAt: Date | null;
}


// Each side reads its own partial index (migration 20261124160100_service_status) over the widest window.
const OUTCOMES_BY_WINDOW = `
  WITH w AS (SELECT * FROM unnest($1::text[], $2::int[]) AS w(name, seconds)),
  settled AS (
    SELECT w.name, s.chain_id, count(*)::int AS settled,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM s.settled_at - s.created_at) * 1000) AS p50,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM s.settled_at - s.created_at) * 1000) AS p95
      FROM w JOIN settlements s ON s.settled_at IS NOT NULL AND s.settled_at >= now() - make_interval(secs => w.seconds)
     GROUP BY w.name, s.chain_id),
  failed AS (
    SELECT w.name, s.chain_id, count(*)::int AS failed
      FROM w JOIN settlements s ON s.state = 'failed' AND s.updated_at >= now() - make_interval(secs => w.seconds)
     GROUP BY w.name, s.chain_id)
  SELECT coalesce(a.name, f.name) AS window, coalesce(a.chain_id, f.chain_id) AS chain_id,
         coalesce(a.settled, 0) AS settled, coalesce(f.failed, 0) AS failed, a.p50, a.p95
    FROM settled a FULL JOIN failed f ON f.name = a.name AND f.chain_id = a.chain_id`;

const WAITING_BY_REASON = `
  SELECT chain_id, waiting_reason AS reason, count(*)::int AS count, min(waiting_since) AS oldest
    FROM settlements WHERE waiting_reason IS NOT NULL
   GROUP BY chain_id, waiting_reason`;

export class SettlementRepository {
  constructor(
    private readonly prisma: PrismaClient,
    /** the worker's hot path (loading and moving a settlement) goes through plain `pg` (see pg-pool.ts) */
    private readonly pool: Pool,
  ) {}

  findById(id: string): Promise<SettlementRow | null> {
    return this.prisma.settlement.findUnique({ where: { id } });
  }

  /**
   * The worker commits to sending something of this settlement (its fee, or its item of a batch): false
   * when it is final already, i.e. a settle request stopped it before anything was sent. Row-locked like
   * the stop (transition with onlyUnclaimed), so exactly one of the two wins.
   */
  async claimSend(id: string): Promise<boolean> {
    return (await SettlementRepository.claimSendWith(this.pool, [id])).length === 1;
  }

  /**
   * The worker commits to signing a sequential x402 settlement's transfer: false when a settle request withheld
   * it first (answered failed; it must never be sent). Row-locked like withholdTransfer, so one of the two wins.
   */
  async claimTransfer(id: string): Promise<boolean> {
    return (await runQuery(this.pool, { name: 'settlements_claim_transfer', text: CLAIM_TRANSFER, values: [id] })).length === 1;
  }

  /**
   * A settle request that must answer now, for a sequential settlement whose fee the worker claimed but whose
   * transfer it has not committed to: true when the transfer is withheld (never sent; the request may answer
   * failed), false when the worker committed first (its transfer is being signed) or it is not in such a state.
   */
  async withholdTransfer(id: string): Promise<boolean> {
    return (await runQuery(this.pool, { name: 'settlements_withhold_transfer', text: WITHHOLD_TRANSFER, values: [id] })).length === 1;
  }

  /** claimSend for several settlements inside a caller's transaction (a batch and its items): the ids claimed. */
  static async claimSendWith(client: Pool | PoolClient, ids: readonly string[]): Promise<string[]> {
    const rows = await runQuery(client, { name: 'settlements_claim_send', text: CLAIM_SEND, values: [ids] });
    return rows.map((r) => r.id as string);
  }

  /** The rows of these settlements, in one query (the API's shared settle waiter reads all it waits for). */
  async findByIds(ids: string[]): Promise<SettlementRow[]> {
    const rows = await runQuery(this.pool, { name: 'settlements_by_ids', text: 'SELECT * FROM settlements WHERE id = ANY($1::text[])', values: [ids] });
    return rows.map(settlementFromColumns);
  }

  /** A settlement of ours that used (or is using) this payment's nonce, if any. */
  findNonceUse({ chainId, nonceSpace, payer, nonce }: PaymentNonce): Promise<SettlementRow | null> {
    return this.prisma.settlement.findFirst({
      where: {
        chainId,
        nonceSpace,
        payer,
        nonce,
        OR: [{ state: { in: [...NONCE_CONSUMING_STATES] } }, { merchantPaid: true }],
      },
    });
  }

  /** The settlement that owns this payment key now, if any (the live one: a released one has no key). */
  async findLiveForPayment(paymentKey: string): Promise<SettlementRow | null> {
    const rows = await runQuery(this.pool, { name: 'settlement_live_for_payment', text: 'SELECT * FROM settlements WHERE payment_key = $1', values: [paymentKey] });
    return rows.length > 0 ? settlementFromColumns(rows[0]) : null;
  }

  /**
   * Public lookup: the settlements whose payer transfer is this transaction (several when the atomic path
   * batched them into one), by the partial (chain_id, settlement_tx_hash) index.
   */
  async findByTransaction(chainId: number, txHash: string): Promise<SettlementRow[]> {
    const rows = await runQuery(this.pool, {
      name: 'settlements_by_transaction',
      text: `SELECT * FROM settlements WHERE chain_id = $1 AND settlement_tx_hash = $2 AND settlement_tx_hash IS NOT NULL
              ORDER BY created_at, id LIMIT ${LOOKUP_LIMIT}`,
      values: [chainId, txHash],
    });
    return rows.map(settlementFromColumns);
  }

  /**
   * Public lookup: the settlements of a payer's nonce in any of `nonceSpaces` (the lookup names a payer and a
   * nonce, not the mechanism), newest first, by their payment index.
   */
  async findByPayerNonce({ chainId, nonceSpaces, payer, nonce }: Omit<PaymentNonce, 'nonceSpace'> & { nonceSpaces: readonly string[] }): Promise<SettlementRow[]> {
    const rows = await runQuery(this.pool, {
      name: 'settlements_by_payer_nonce_spaces',
      text: `SELECT * FROM settlements WHERE chain_id = $1 AND nonce_space = ANY($2::text[]) AND payer = $3 AND nonce = $4
              ORDER BY created_at DESC, id DESC LIMIT ${LOOKUP_LIMIT}`,
      values: [chainId, [...nonceSpaces], payer, nonce],
    });
    return rows.map(settlementFromColumns);
  }

  findSettledForVerification(verificationId: string): Promise<SettlementRow | null> {
    return this.prisma.settlement.findFirst({ where: { verificationId, state: 'settled' } });
  }

  async findWithVerification(id: string): Promise<SettlementWithVerificationRow | null> {
    const rows = await runQuery(this.pool, { name: 'settlement_with_verification', text: FIND_WITH_VERIFICATION, values: [id] });
    return rows.length > 0 ? settlementWithVerificationFromColumns(rows[0]) : null;
  }

  /**
   * The settlement that owns this payment: the live one if there is one, else a new one. The unique
   * payment key makes this safe under any concurrency: exactly one insert wins, the rest read it.
   */
  async createOrGetForPayment(data: NewSettlementRow): Promise<{ settlement: SettlementRow; created: boolean }> {
    const values = [
      data.id, data.verificationId, data.paymentKey, data.surface, data.chainId, data.tokenAddress, data.payer, data.merchant,
      data.amount, data.nonce, data.feeAmount, data.metadata == null ? null : JSON.stringify(data.metadata), data.authorizationFingerprint,
      data.mechanism, data.scheme, data.nonceSpace, data.payload == null ? null : JSON.stringify(data.payload),
    ];
    // An insert that lost to one committed after this statement began sees neither its own row nor the
    // winner's: it finds nothing, and the next attempt reads the winner.
    for (let attempt = 0; attempt < 3; attempt++) {
      const rows = await runQuery(this.pool, { name: 'settlement_create_or_get', text: CREATE_OR_GET, values });
      if (rows.length > 0) return { settlement: settlementFromColumns(rows[0]), created: rows[0].created === true };
    }
    throw new Error(`could not create or find the settlement of payment ${data.paymentKey}`);
  }

  /**
   * Moves a settlement from one state to the next, with its history row, atomically and only if it is
   * still in `from` (so two workers can never both advance it). Returns the moved settlement, or null when
   * it had moved on.
   */
  async transition(request: TransitionRequest): Promise<SettlementRow | null> {
    const statement = transitionStatement(request);
    if (!request.event) {
      const rows = await runQuery(this.pool, statement);
      return rows.length > 0 ? settlementFromColumns(rows[0]) : null;
    }
    return this.inTransaction(async (client) => {
      const rows = await runQuery(client, statement);
      if (rows.length === 0) return null;
      const moved = settlementFromColumns(rows[0]);
      const event = request.event!(moved);
      if (event) await WebhookEventRepository.insertWith(client, event);
      return moved;
    });
  }

  /**
   * The check_allowance -> collect_fee transition, taken only when the merchant's allowance and balance
   * cover this fee on top of every fee already in flight for it. Serialized per merchant by a transaction
   * advisory lock, so concurrent workers (any process) never reserve more than the merchant can pay; one
   * statement (see reservingTransitionStatement).
   */
  async transitionReservingFee(
    request: TransitionRequest,
    reservation: FeeReservationRequest,
  ): Promise<{ moved: SettlementRow | null; inFlight: bigint; payer?: PayerInFlight }> {
    const [row] = await runQuery(this.pool, reservingTransitionStatement(request, reservation));
    const inFlight = BigInt(row.reservation_in_flight as string);
    const payer = reservation.payer
      ? {
          value: BigInt(row.payer_in_flight as string),
          items: row.payer_items as number,
          failures: row.payer_failures as number,
          lastFailureAt: row.payer_last_failure_at == null ? null : new Date(row.payer_last_failure_at as string),
        }
      : undefined;
    return { moved: row.id == null ? null : settlementFromColumns(row), inFlight, ...(payer ? { payer } : {}) };
  }

  /**
   * Costly failures on chain (see settlement_costly_failure) since `since` of this payer's payments, and of
   * payments to this merchant whoever the payers: one statement, as every settle request and check_allowance ask both.
   */
  async failuresOfPayment(payer: string, merchant: string, chainId: number, since: Date): Promise<{ payer: FeeReverts; merchant: FeeReverts }> {
    const [row] = await runQuery(this.pool, { name: 'failures_of_payment', text: FAILURES_OF_PAYMENT, values: [payer, merchant, chainId, since] });
    const at = (v: unknown) => (v == null ? null : new Date(v as string));
    return { payer: { count: row.payer_failures as number, lastAt: at(row.payer_last_at) }, merchant: { count: row.merchant_failures as number, lastAt: at(row.merchant_last_at) } };
  }

  /** Whether this payer has a settled payment to this merchant on this chain. */
  async hasPaid(payer: string, merchant: string, chainId: number): Promise<boolean> {
    const rows = await runQuery(this.pool, {
      name: 'settlement_has_paid',
      text: `SELECT 1 FROM settlements WHERE merchant = $1 AND payer = $2 AND chain_id = $3 AND state = 'settled' LIMIT 1`,
      values: [merchant, payer, chainId],
    });
    return rows.length > 0;
  }

  /** Fee transfers of this merchant that were sent and reverted since `since`. */
  async feeRevertsOfMerchant(merchant: string, chainId: number, since: Date): Promise<FeeReverts> {
    const [row] = await runQuery(this.pool, { name: 'fee_reverts_of_merchant', text: FEE_REVERTS_OF_MERCHANT, values: [merchant, chainId, since] });
    return { count: row.reverts as number, lastAt: row.last_at == null ? null : new Date(row.last_at as string) };
  }

  /**
   * Settlements charged no fee (upto amounts below the fee) created since `since`: the merchant's, and all of
   * them, by the partial index on fee-free rows (migration 20261125200000).
   */
  async feeFreeSince(merchant: string, since: Date): Promise<{ merchant: number; all: number }> {
    const [row] = await runQuery(this.pool, {
      name: 'settlements_fee_free_since',
      // one that failed before anything was sent cost no gas: it is not counted (nor can a stranger spend the
      // budget with payments it makes fail before they are sent)
      text: `SELECT count(*) FILTER (WHERE merchant = $1)::int AS merchant, count(*)::int AS all FROM settlements
              WHERE fee_amount = '0' AND created_at >= $2 AND (state <> 'failed' OR settlement_tx_hash IS NOT NULL)`,
      values: [merchant, since],
    });
    return { merchant: row.merchant as number, all: row.all as number };
  }

  /** Fee transfers sent for earlier settlements of this payment that reverted. */
  async feeRevertsOfPayment({ chainId, nonceSpace, payer, nonce }: PaymentNonce): Promise<FeeReverts> {
    const [row] = await runQuery(this.pool, {
      name: 'fee_reverts_of_payment',
      text: FEE_REVERTS_OF_PAYMENT,
      values: [chainId, nonceSpace, payer, nonce],
    });
    return { count: row.reverts as number, lastAt: row.last_at == null ? null : new Date(row.last_at as string) };
  }

  /**
   * What became of a settlement's transactions after it ended (reorg watching): its `finality` (a
   * `changed` one stays so: what the merchant was told last is that the outcome changed), a reorg
   * counted, and a history row with `note` (from and to its unchanged state), and the event made from the
   * updated row stored in the same database transaction. Null when there is no such settlement.
   * `merchantPaid`: what the merchant is told now of its payment, when a change tells it (the next reorg is
   * judged against it).
   */
  async recordFinality(
    id: string,
    update: { finality?: string; reorg?: boolean; note: Record<string, unknown>; merchantPaid?: boolean },
    event?: (row: SettlementRow) => WebhookEventRow | undefined,
  ): Promise<SettlementRow | null> {
    return this.inTransaction(async (client) => {
      const rows = await runQuery(client, {
        name: 'settlement_record_finality',
        text: `
          WITH updated AS (
            UPDATE settlements
               SET finality = CASE WHEN finality = 'changed' THEN finality ELSE COALESCE($2, finality) END,
                   reorg_count = reorg_count + $3, merchant_paid = COALESCE($5, merchant_paid), updated_at = now()
             WHERE id = $1 RETURNING *
          ), history AS (
            INSERT INTO settlement_transitions (settlement_id, from_state, to_state, note) SELECT id, state, state, $4::jsonb FROM updated
          )
          SELECT * FROM updated`,
        values: [id, update.finality ?? null, update.reorg ? 1 : 0, JSON.stringify(update.note), update.merchantPaid ?? null],
      });
      if (rows.length === 0) return null;
      const row = settlementFromColumns(rows[0]);
      const stored = event?.(row);
      if (stored) await WebhookEventRepository.insertWith(client, stored);
      return row;
    });
  }

  /**
   * Ended settlements none of whose mined transactions is still watched become `final` (those that never
   * mined one included; one whose outcome changed keeps `changed`). Returns how many. The partial index
   * on unfinished finality keeps this to the settlements that ended lately.
   */
  /**
   * Settled settlements whose payment another transaction than their own executed, not FINALITY_DEPTH deep yet,
   * of one network (the finality watcher's; a settlement told its outcome changed is no longer watched).
   */
  async foreignExecutionsAwaitingFinality(chainId: number, limit: number): Promise<ForeignExecutionWatch[]> {
    const rows = await runQuery(this.pool, {
      name: 'settlement_foreign_awaiting_finality',
      text: `
        SELECT f.settlement_id, f.tx_hash, f.block_number, f.block_hash
          FROM settlement_foreign_executions f JOIN settlements s ON s.id = f.settlement_id
         WHERE f.chain_id = $1 AND f.final_at IS NULL AND s.state = 'settled' AND s.finality IS DISTINCT FROM 'changed'
         ORDER BY f.block_number LIMIT $2`,
      values: [chainId, limit],
    });
    return rows.map((r) => ({ settlementId: r.settlement_id as string, txHash: r.tx_hash as string, blockNumber: Number(r.block_number), blockHash: r.block_hash as string }));
  }

  /** The foreign execution is FINALITY_DEPTH deep: no longer watched. */
  async markForeignExecutionFinal(settlementId: string): Promise<void> {
    await runQuery(this.pool, {
      name: 'settlement_foreign_mark_final',
      text: `UPDATE settlement_foreign_executions SET final_at = now(), updated_at = now() WHERE settlement_id = $1 AND final_at IS NULL`,
      values: [settlementId],
    });
  }

  /**
   * After a reorg, the payment's execution is found in another block, or in another transaction: watched there
   * from now on; the settlement's transaction hash follows it (what the merchant is told paid it).
   */
  async moveForeignExecution(settlementId: string, to: ForeignExecutionBlock): Promise<void> {
    await runQuery(this.pool, {
      name: 'settlement_foreign_move',
      text: `
        WITH watched AS (
          UPDATE settlement_foreign_executions SET tx_hash = $2, block_number = $3, block_hash = $4, updated_at = now()
           WHERE settlement_id = $1 RETURNING settlement_id)
        UPDATE settlements SET settlement_tx_hash = $2, updated_at = now() WHERE id IN (SELECT settlement_id FROM watched)`,
      values: [settlementId, to.txHash, to.blockNumber, to.blockHash],
    });
  }

  async markFinalWhereSettled(): Promise<number> {
    const rows = await runQuery(this.pool, {
      name: 'settlement_mark_final',
      text: `
        UPDATE settlements s SET finality = 'final', updated_at = now()
         WHERE (s.finality IS NULL OR s.finality = 'reorged') AND s.state IN ('settled', 'failed')
           -- a transaction someone else sent that settled it is watched too (settlement_foreign_executions)
           AND NOT EXISTS (SELECT 1 FROM settlement_foreign_executions f WHERE f.settlement_id = s.id AND f.final_at IS NULL)
           AND NOT EXISTS (SELECT 1 FROM chain_transactions t
                            WHERE t.final_at IS NULL AND t.status IN ('confirmed', 'reverted')
                              AND (t.settlement_id = s.id
                                   -- an atomic settlement's transaction is its batch's
                                   OR t.settlement_id = (SELECT i.batch_id FROM settlement_batch_items i WHERE i.settlement_id = s.id)))
        RETURNING s.id`,
      values: [],
    });
    return rows.length;
  }

  /**
   * The settlement waits in `state` for the chain (see SettlementWaitReason): the reason and its detail
   * are shown on its status record; `since` keeps the start of the wait. False when it left that state.
   */
  async markWaiting(id: string, state: SettlementState, reason: string, detail: object): Promise<boolean> {
    const rows = await runQuery(this.pool, {
      name: 'settlement_mark_waiting',
      text: `UPDATE settlements
                SET waiting_since = CASE WHEN waiting_reason = $3 THEN waiting_since ELSE now() END,
                    updated_at = CASE WHEN waiting_reason = $3 THEN updated_at ELSE now() END,
                    waiting_reason = $3, waiting_detail = $4::jsonb
              WHERE id = $1 AND state = $2::"SettlementState" RETURNING id`,
      values: [id, state, reason, JSON.stringify(detail)],
    });
    return rows.length > 0;
  }

  /**
   * The status page's settle figures per window and network: settlements that settled in it (with the p50
   * and p95 of settled_at - created_at) and those that failed in it (`failed` is final: updated_at is when).
   */
  async outcomesByWindow(windows: readonly StatusWindow[]): Promise<WindowSettleOutcomes[]> {
    const rows = await windowRows(this.pool, 'settlement_outcomes_by_window', OUTCOMES_BY_WINDOW, windows);
    return rows.map((r) => ({
      window: r.window as string,
      chainId: r.chain_id as number,
      count: r.settled as number,
      failed: r.failed as number,
      p50Ms: optionalMs(r.p50),
      p95Ms: optionalMs(r.p95),
    }));
  }

  /** Settlements waiting for the chain now, per network and reason (the status page). */
  async waitingByReason(): Promise<WaitingCount[]> {
    const rows = await runQuery(this.pool, { name: 'settlement_waiting_by_reason', text: WAITING_BY_REASON, values: [] });
    return rows.map((r) => ({ chainId: r.chain_id as number, reason: r.reason as string, count: r.count as number, oldestSince: optionalDateColumn(r.oldest) }));
  }

  /** Parks a settlement for an operator: its job ran out of attempts while the money state is unknown. */
  async markNeedsAttention(id: string, reason: string): Promise<void> {
    await this.prisma.settlement.update({ where: { id }, data: { attentionReason: reason.slice(0, 1000), attentionAt: new Date() } });
  }

  /** Takes a settlement off the attention list (an operator retries it, or it reached a final state). */
  async clearAttention(id: string): Promise<SettlementRow | null> {
    const { count } = await this.prisma.settlement.updateMany({ where: { id }, data: { attentionReason: null, attentionAt: null } });
    return count > 0 ? this.findById(id) : null;
  }

  /** A merchant's settlements, newest first, `limit` of them after `before` (the merchant page; its own index). */
  pageOfMerchant(merchant: string, limit: number, before?: KeysetCursor): Promise<SettlementRow[]> {
    return this.prisma.settlement.findMany({ where: { merchant, ...olderThan(before) }, orderBy: NEWEST_FIRST, take: limit });
  }

  /** The fees collected from a merchant so far: their sum (token units) and how many settlements paid one. */
  async feesOfMerchant(merchant: string): Promise<{ total: string; count: number }> {
    const [row] = await runQuery(this.pool, {
      name: 'settlement_fees_of_merchant',
      text: `SELECT coalesce(sum(fee_amount::numeric), 0)::text AS total, count(*)::int AS count
               FROM settlements WHERE merchant = $1 AND fee_collected_at IS NOT NULL`,
      values: [merchant],
    });
    return { total: row.total as string, count: row.count as number };
  }

  countNeedingAttention(): Promise<number> {
    return this.prisma.settlement.count({ where: { attentionAt: { not: null } } });
  }

  findNeedingAttention(limit: number): Promise<SettlementRow[]> {
    return this.prisma.settlement.findMany({ where: { attentionAt: { not: null } }, orderBy: { attentionAt: 'asc' }, take: limit });
  }

  private inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, work);
  }


  /** Retention: a page of failed settlements that moved no money, failed before `before` (see FAILED_PAGE). */
  async failedPage(before: Date, after: RetentionCursor, limit: number): Promise<RetentionPage> {
    const rows = await runQuery(this.pool, { name: 'settlement_failed_page', text: FAILED_PAGE, values: [before, after.at, after.id, limit] });
    const last = rows.at(-1);
    return {
      ids: rows.map((r) => r.id as string),
      next: rows.length < limit || !last ? null : { at: dateColumn(last.updated_at), id: last.id as string },
    };
  }

  /** Retention: deletes those of `ids` that are still deletable (DELETE_FAILED), with their history; returns how many went. */
  async deleteFailed(ids: string[]): Promise<number> {
    return ids.length === 0 ? 0 : runCount(this.pool, { name: 'settlement_delete_failed', text: DELETE_FAILED, values: [ids] });
  }

  /** Settlements that are not final and have not moved for a while: their jobs may be lost. */
  findStale(olderThan: Date, limit: number): Promise<SettlementRow[]> {
    return this.prisma.settlement.findMany({
      // a parked settlement waits for an operator, not for the sweeper
      where: { state: { notIn: ['settled', 'failed'] }, updatedAt: { lt: olderThan }, attentionAt: null },
      orderBy: { updatedAt: 'asc' },
      take: limit,
    });
  }
}
