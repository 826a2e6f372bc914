import type { Settlement } from '@facilitator/db';

/**
 * The standard x402 facilitator answers (x402 specification §5.3, §5.4, §7): the shapes the x402
 * middleware (`@x402/core`'s HTTPFacilitatorClient, `x402/verify`'s useFacilitator) reads.
 */

export interface X402VerifyResponse {
  isValid: boolean;
  invalidReason?: string;
  invalidMessage?: string;
  payer?: string;
}

export interface X402SettleResponse {
  success: boolean;
  errorReason?: string;
  errorMessage?: string;
  payer?: string;
  /** the settlement transaction hash; "" when there is none */
  transaction: string;
  network: string;
  /** on success: the amount paid (atomic units) and, in `extra.payTo`, the merchant paid — so an
   * integration can check that the payment it asked about is the one that settled */
  amount?: string;
  extra?: { payTo: string };
}

export interface X402SupportedResponse {
  kinds: Array<{ x402Version: number; scheme: string; network: string }>;
  extensions: string[];
  signers: Record<string, string[]>;
}

const withPayer = <T extends object>(body: T, payer: string | undefined): T & { payer?: string } =>
  payer === undefined ? body : { ...body, payer };

export function x402VerifyValid(payer: string): X402VerifyResponse {
  return { isValid: true, payer };
}

export function x402VerifyInvalid(invalidReason: string, invalidMessage: string, payer?: string): X402VerifyResponse {
  return withPayer({ isValid: false, invalidReason, invalidMessage }, payer);
}

/** x402 v2 answers also carry the amount paid and (in `extra`) the merchant; v1's answer has no such fields. */
export function x402SettleSucceeded(settlement: Settlement, payer: string, network: string, x402Version: 1 | 2 = 2): X402SettleResponse {
  const body: X402SettleResponse = { success: true, payer, transaction: settlement.settlementTxHash ?? '', network };
  return x402Version === 1 ? body : { ...body, amount: settlement.amount, extra: { payTo: settlement.merchant } };
}

/** An upto settle of 0 (x402 v2 only): success, no transaction, amount 0, as the reference answers it. */
export function x402SettledNothing(payer: string, network: string, payTo: string): X402SettleResponse {
  return { success: true, payer, transaction: '', network, amount: '0', extra: { payTo } };
}

export function x402SettleFailed(
  errorReason: string,
  errorMessage: string,
  payer: string | undefined,
  network: string | undefined,
  transaction = '',
): X402SettleResponse {
  return withPayer({ success: false, errorReason, errorMessage, transaction, network: network ?? '' }, payer);
}
