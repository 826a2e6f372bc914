import { transitionSets, type TransitionRequest } from './transition-statement';

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

/**
 * The transition guarded by the fee reservation, in one statement: the merchant's fees in flight are read
 * under its advisory lock (settlement_fees_in_flight_locked, which holds it until this statement commits),
 * and the row moves only when they and this fee fit in what the merchant can spend. One round trip: the
 * lock is held for the database's work only, not across the worker's event loop (which, under load,
 * made the reservation a queue per merchant). Always one row: the fees in flight, and the moved row or nulls.
 */
export function reservingTransitionStatement(request: TransitionRequest, reservation: FeeReservationRequest): { name: string; text: string; values: unknown[] } {
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
