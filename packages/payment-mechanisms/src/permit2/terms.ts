import type { ApprovalPermit, ParsedPayment, SettleOrder } from '../mechanism';
import { PERMIT2_ADDRESS } from './addresses';
import type { Permit2Transfer } from './payload';
import { type PaymentMechanismId } from '../mechanism-ids';

/**
 * A Permit2 payload with its terms under a mechanism: its nonce is Permit2's, per payer, across every token
 * and spender; its amount is what the permit lets the proxy move (upto: the maximum).
 */
export function permit2PaymentOf<Payload extends Permit2Transfer>(mechanism: PaymentMechanismId, scheme: string, p: Payload, sender?: string): ParsedPayment<Payload> {
  return {
    terms: {
      mechanism,
      scheme,
      payer: p.from,
      payee: p.to,
      token: p.token,
      spender: p.spender,
      amount: p.amount,
      // terms are usable when validAfter < now < validBefore: the proxy moves it from validAfter on, and
      // Permit2 until its deadline included
      validAfter: p.validAfter > 0n ? p.validAfter - 1n : 0n,
      validBefore: p.deadline + 1n,
      nonce: { space: PERMIT2_ADDRESS, payer: p.from, value: '0x' + p.nonce.toString(16).padStart(64, '0') },
      ...(sender === undefined ? {} : { sender }),
    },
    payload: p,
    signature: p.signature,
  };
}

/** The payer's EIP-2612 permit a direct call sends, when the engine asks for it (`SettleOrder.withPermit`); a payment without one cannot. */
export function permitToSend(p: Permit2Transfer, settle: SettleOrder | undefined): ApprovalPermit | undefined {
  if (!settle?.withPermit) return undefined;
  if (!p.permit) throw new Error('a settle order with the payer\'s permit for a payment that carries none');
  return p.permit;
}
