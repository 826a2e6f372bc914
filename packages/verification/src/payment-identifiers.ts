import { PaymentIdentifierConflictError } from '@facilitator/core';
import type { PaymentIdentifierRepository } from '@facilitator/db';
import type { Payment } from './payment';

/**
 * The x402 `payment-identifier` extension as a facilitator keeps it (docs/decisions.md, "Payment
 * identifiers"): the id a client gives a payment binds, on its network and for its merchant, to that
 * payment's authorization fingerprint the first time the payment is found valid. The same id with the same
 * payment then goes on (and meets the same verification and the one settlement of that payment); the same
 * id with another payment is refused with PaymentIdentifierConflictError (409).
 */
export class PaymentIdentifiers {
  constructor(private readonly repository: Pick<PaymentIdentifierRepository, 'bind'>) {}

  async bind(payment: Payment): Promise<void> {
    if (payment.paymentId === undefined) return;
    const { network, terms } = payment;
    const fingerprint = payment.mechanism.fingerprint(payment.payload, network);
    const bound = await this.repository.bind({
      chainId: network.chainId,
      paymentId: payment.paymentId,
      merchant: payment.expected.payTo,
      authorizationFingerprint: fingerprint,
      tokenAddress: network.tokenAddress,
      payer: terms.payer,
      nonce: terms.nonce.value,
    });
    if (bound !== fingerprint) throw new PaymentIdentifierConflictError(payment.paymentId);
  }
}
