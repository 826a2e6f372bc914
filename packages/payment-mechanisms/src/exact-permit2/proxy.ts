import { X402_EXACT_PERMIT2_PROXY } from '../permit2/addresses';
import type { X402Permit2Proxy } from '../permit2/x402-proxy';
import { proxySettlementOf } from './proxy-calldata';

/** x402's exact proxy: it moves the permitted amount whole, from any sender. */
export const EXACT_PROXY: X402Permit2Proxy = {
  address: X402_EXACT_PERMIT2_PROXY,
  name: 'exact',
  executorSlot: 'exactProxy',
  settlementOf: proxySettlementOf,
  mayMove: (value, terms) => value === terms.amount,
};
