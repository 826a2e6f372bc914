import type { SettlementState } from '@facilitator/db';
import type { Step } from '../step';
import { checkAllowance } from './check-allowance';
import { collectFee } from './collect-fee';
import { confirmTransfer } from './confirm-transfer';
import { deployWallet } from './deploy-wallet';
import { preflight } from './preflight';
import { submitTransfer } from './submit-transfer';

/** The work done in each non-final state. */
export const STEPS: Readonly<Record<Exclude<SettlementState, 'settled' | 'failed'>, Step>> = {
  pending: preflight,
  deploying_wallet: deployWallet,
  check_allowance: checkAllowance,
  collect_fee: collectFee,
  fee_collected: submitTransfer,
  executing: confirmTransfer,
};
