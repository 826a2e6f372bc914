import type { TransactionProvider, UsdcClient } from '@facilitator/chain';
import type { Settlement, SettlementState, SettlementUpdate, Verification } from '@facilitator/db';

export type SettlementWithVerification = Settlement & { verification: Verification };

export interface SettlementNetwork {
  chainId: number;
  caip2: string;
  rpcUrl: string;
  confirmations: number;
  usdc: UsdcClient;
}

export interface StepContext {
  settlement: SettlementWithVerification;
  network: SettlementNetwork;
  transactions: TransactionProvider;
  /** the relayer keys' addresses; the first one also dry-runs transfers */
  relayers: readonly string[];
  /** picks the relayer for a new transfer (round robin) */
  nextRelayer(): string;
  treasury: string;
  feeAmount: bigint;
  /** an authorization must stay valid this long when the transfer is attempted */
  expiryMarginSeconds: number;
  /** Unix seconds */
  now(): number;
}

export interface StepResult {
  to: SettlementState;
  /** fields written together with the new state */
  data?: SettlementUpdate;
  /** kept in the transition's history row */
  note?: Record<string, unknown>;
}

/** Does the work of one state and says where to go next. Must be safe to run again after a crash. */
export type Step = (ctx: StepContext) => Promise<StepResult>;
