import type { Commitment } from '@solana/kit';

/**
 * The commitment each read asks for, passed explicitly on every call (kit's rpc leaves it out, and a node then
 * answers at `finalized`; kit's helpers default to `confirmed`). One table, so the choice is read in one place.
 *
 * - `confirmed` for the state a decision is made on (an allowance, a balance, a mint, a simulation, the fee
 *   payer's preflight, a landed transaction's effects): a supermajority voted for the block, so on mainnet it
 *   is not rolled back in practice, and it trails the newest block by about a second. `processed` can be a
 *   fork that is dropped; `finalized` trails by about 13 s, so a merchant's approval made just before would
 *   read as missing.
 * - `confirmed` for the blockhash we build a transaction on: a `processed` one can belong to a fork the
 *   cluster abandons, and the transaction would then never land (the usual advice, and kit's default).
 * - `processed` for "is this blockhash still valid": the newest bank knows every blockhash a transaction can
 *   carry (one the payer read at `processed` included, which an older bank would call unknown).
 * - `finalized` for the block height that decides expiry: only once the finalized chain is past a blockhash's
 *   last valid height can no block that could still hold the transaction ever appear.
 */
export const READ_COMMITMENT = {
  accounts: 'confirmed',
  simulation: 'confirmed',
  preflight: 'confirmed',
  transaction: 'confirmed',
  latestBlockhash: 'confirmed',
  blockhashValidity: 'processed',
  expiryBlockHeight: 'finalized',
} as const satisfies Record<string, Commitment>;
