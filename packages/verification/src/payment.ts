import type { NetworkConfig } from '@facilitator/config';
import type { PaymentMechanism, PaymentTerms } from '@facilitator/payment-mechanisms';

/**
 * A payment to verify, whichever form it arrived in. Normalizers build it from the request bodies;
 * the checks and the records only ever see this.
 */
export interface Payment {
  /** 2 for Form A and x402 v2 bodies, 1 for Form B and x402 v1 bodies */
  protocolVersion: 1 | 2;
  /** which API received it: "v1" (/v1 routes) or "x402" (the x402 facilitator routes) */
  surface: 'v1' | 'x402';
  network: NetworkConfig;
  /** the network name as the client wrote it, echoed back in answers */
  networkName: string;
  /** the mechanism that read the payload: how its signature recovers, its fingerprint, how it is stored */
  mechanism: PaymentMechanism<unknown>;
  /** what the payer signed, whatever the mechanism: all the checks and the records read of it */
  terms: PaymentTerms;
  /** the payload as its mechanism normalized it: what is stored, and what settlement executes */
  payload: unknown;
  /** the payer's signature as sent (an ERC-6492 one still wrapped) */
  signature: string;
  expected: {
    payTo: string;
    /** the amount the payment must sign: exact's amount, upto's maximum (what the requirements accepted) */
    amount: bigint;
    /** lowercase; undefined when the requirements name no token */
    token?: string;
  };
  metadata?: Record<string, unknown>;
  webhookUrl?: string;
  /**
   * The amount the merchant asks to move, when its mechanism signs a maximum (x402 upto: the settle request's
   * `paymentRequirements.amount`, at most `expected.amount`); absent: the signed amount moves whole.
   */
  settleAmount?: bigint;
  /** the x402 `payment-identifier` the client gave this payment (x402 v2 and Form A `extensions`) */
  paymentId?: string;
  /** what was received, stored with the verification so it can be settled later */
  request: unknown;
}
