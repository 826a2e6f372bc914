import type { TransactionError } from '@solana/kit';

/** A transaction's error as a node reports it (`"BlockhashNotFound"`, `{ "InstructionError": [1, { "Custom": 1 }] }`). */
export type SvmTransactionError = TransactionError;

/**
 * The error as JSON text, for records and logs: kit hands numbers back as bigints, which JSON.stringify
 * refuses, so they are written as numbers (instruction indexes and custom codes are small).
 */
export function transactionErrorText(error: SvmTransactionError | unknown): string {
  return JSON.stringify(error, (_key, value: unknown) => (typeof value === 'bigint' ? Number(value) : value));
}
