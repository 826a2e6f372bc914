import { X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import type { X402Permit2Proxy } from '../permit2/x402-proxy';
import { settleAmountProblem } from '../settle-amount';
import { uptoProxySettlementOf } from './proxy-calldata';

/** x402's upto proxy: it moves any amount up to the permitted maximum, sent by the witness's facilitator only. */
export const UPTO_PROXY: X402Permit2Proxy = {
  address: X402_UPTO_PERMIT2_PROXY,
  name: 'upto',
  executorSlot: 'uptoProxy',
  settlementOf: uptoProxySettlementOf,
  mayMove: (value, terms) => settleAmountProblem({ signedAmount: 'maximum' }, terms, value) === undefined,
};
