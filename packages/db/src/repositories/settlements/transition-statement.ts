import type { SettlementState } from '../../generated/prisma/client';
import type { WebhookEventRow } from '../webhook-event-repository';
import { UPDATE_COLUMNS, type SettlementUpdate } from '../settlement-row';
import type { SettlementRow } from './settlement-table';

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

// Nothing of it was claimed for sending, and (rows of a worker older than the claim, during a rolling deploy)
// nothing of it stored to be sent: no transaction of its own, no batch item.
// a settlement waiting for the confirmations of a transaction that already paid its merchant (someone else's:
// execution_confirming) is paid, not unsent: never stopped
const UNCLAIMED = `
         AND send_claimed_at IS NULL
         AND waiting_reason IS DISTINCT FROM 'execution_confirming'
         AND NOT EXISTS (SELECT 1 FROM chain_transactions t WHERE t.settlement_id = $1)
         AND NOT EXISTS (SELECT 1 FROM settlement_batch_items i WHERE i.settlement_id = $1)`;

/**
 * The state change, the fields written with it and the history row, as one statement (so one implicit
 * transaction): the worker's hot path makes five of these per settlement. One prepared statement per
 * combination of fields written, named by that combination.
 */
export function transitionStatement(request: TransitionRequest): { name: string; text: string; values: unknown[] } {
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
export function transitionSets(request: TransitionRequest): { values: unknown[]; sets: string; mask: number } {
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
