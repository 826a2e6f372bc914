import type { ChainFamilyId } from '@facilitator/core';
import type { SettlementState } from '@facilitator/db';
import type { Step, StepContext } from '../step';
import { collectFeeAndTransfer, recordAtomicExecution, recordAtomicSettlement } from './atomic-steps';
import { checkAllowance } from './check-allowance';
import { collectFee } from './collect-fee';
import { confirmTransfer } from './confirm-transfer';
import { deployWallet } from './deploy-wallet';
import { preflight } from './preflight';
import { submitTransfer } from './submit-transfer';

/** One step per path: a settlement keeps the path recorded when it entered collect_fee. */
function byPath(paths: { sequential: Step; atomic: Step }): Step {
  return (ctx: StepContext) => (ctx.settlement.settlementMode === 'atomic' ? paths.atomic : paths.sequential)(ctx);
}

/** The states a step works in: every state but the final ones. */
export type ProcessingState = Exclude<SettlementState, 'settled' | 'failed'>;

/** A family's settlement: the work done in each processing state, over the one transition table (`states.ts`). */
export type StepTable = Readonly<Record<ProcessingState, Step>>;

/**
 * The EVM family's work in each non-final state: a pre-flight that simulates, an ERC-6492 wallet deployed where
 * needed, the fee by ERC-20 allowance, then either the executor's one transaction (atomic) or the fee's and
 * the payment's own transactions (sequential).
 */
export const EVM_STEPS: StepTable = {
  pending: preflight,
  deploying_wallet: deployWallet,
  check_allowance: checkAllowance,
  collect_fee: byPath({ sequential: collectFee, atomic: collectFeeAndTransfer }),
  fee_collected: byPath({ sequential: submitTransfer, atomic: recordAtomicExecution }),
  executing: byPath({ sequential: confirmTransfer, atomic: recordAtomicSettlement }),
};

/**
 * The step table of each family the machine settles on, found by the settlement's network's family. The
 * transition table, persistence before each chain action, waits and events are the machine's, one for every
 * family; a family brings the work in each state (Solana's, issue 43: the fee's delegated transfer, then the
 * payer's own transaction).
 */
export const STEPS_BY_FAMILY: Readonly<Partial<Record<ChainFamilyId, StepTable>>> = { evm: EVM_STEPS };
