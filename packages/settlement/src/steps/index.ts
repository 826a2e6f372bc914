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

/** The work done in each non-final state. */
export const STEPS: Readonly<Record<Exclude<SettlementState, 'settled' | 'failed'>, Step>> = {
  pending: preflight,
  deploying_wallet: deployWallet,
  check_allowance: checkAllowance,
  collect_fee: byPath({ sequential: collectFee, atomic: collectFeeAndTransfer }),
  fee_collected: byPath({ sequential: submitTransfer, atomic: recordAtomicExecution }),
  executing: byPath({ sequential: confirmTransfer, atomic: recordAtomicSettlement }),
};
