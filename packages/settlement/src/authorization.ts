import { tokenSignature } from '@facilitator/chain-rpc';
import { EXACT_EIP3009, type TransferAuthorization } from '@facilitator/core';
import { exactEip3009, type ExactEip3009Payload } from '@facilitator/payment-mechanisms';
import type { SettlementWithVerification } from './step';

/**
 * The payment a settlement executes: its own stored payload, read by its mechanism. A settlement started by
 * an older process during a rolling deploy has none; its authorization is then rebuilt, as before, from its
 * columns and its verification's validity and signature.
 *
 * The payload is what goes on chain; the columns are what the fee reservation, the accounting and the
 * answers read. They were written together from one verification, and a row where they disagree is refused
 * here, before anything is sent, rather than executing one payment while reporting another.
 */
function paymentOf(settlement: SettlementWithVerification): ExactEip3009Payload {
  // a verify that found the nonce held rejects its row right after storing it; a settle that raced into
  // that moment copied the payload, but what the verify answered was "invalid" (see preflight)
  if (settlement.verification.status !== 'verified') {
    throw new Error(`settlement ${settlement.id}: its verification ${settlement.verificationId} was rejected; its payment is not executed`);
  }
  return settlement.payload == null ? fromColumns(settlement) : fromPayload(settlement);
}

function fromPayload(settlement: SettlementWithVerification): ExactEip3009Payload {
  if (settlement.mechanism !== EXACT_EIP3009) {
    throw new Error(`settlement ${settlement.id} is a payment of mechanism ${settlement.mechanism}, which this worker cannot execute`);
  }
  const payment = exactEip3009.fromStored(settlement.payload, { chainId: settlement.chainId, tokenAddress: settlement.tokenAddress.toLowerCase() }).payload;
  const a = payment.authorization;
  const columns = { payer: settlement.payer, merchant: settlement.merchant, amount: settlement.amount, nonce: settlement.nonce };
  const signed = { payer: a.from, merchant: a.to, amount: a.value.toString(), nonce: a.nonce };
  for (const field of Object.keys(columns) as Array<keyof typeof columns>) {
    if (columns[field].toLowerCase() !== signed[field]) {
      throw new Error(`settlement ${settlement.id}: its stored payment's ${field} (${signed[field]}) is not its row's (${columns[field]})`);
    }
  }
  return payment;
}

function fromColumns(settlement: SettlementWithVerification): ExactEip3009Payload {
  const v = settlement.verification;
  if (!v.signature) throw new Error(`verification ${settlement.verificationId} has no signature`);
  return {
    authorization: {
      from: settlement.payer,
      to: settlement.merchant,
      value: BigInt(settlement.amount),
      validAfter: BigInt(v.validAfter ?? '0'),
      validBefore: BigInt(v.validBefore ?? '0'),
      nonce: settlement.nonce,
    },
    signature: v.signature,
  };
}

/** The signed authorization a settlement executes. */
export function authorizationOf(settlement: SettlementWithVerification): TransferAuthorization {
  return paymentOf(settlement).authorization;
}

/**
 * The signature the token is given: for an ERC-6492 payer, the wallet's own (inner) signature, which it
 * checks once deployed; the token knows nothing of ERC-6492.
 */
export function signatureOf(settlement: SettlementWithVerification): string {
  return tokenSignature(paymentOf(settlement).signature);
}

/** The signature as the payer sent it (ERC-6492-wrapped or not). */
export function rawSignatureOf(settlement: SettlementWithVerification): string {
  return paymentOf(settlement).signature;
}
