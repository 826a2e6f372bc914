import { SETTLE_FORM_B_FIELDS, validateSettleFormA, validateSettleFormB } from '@facilitator/schemas';
import { EnabledNetworks, parseX402Request, paymentFromFormA, type Payment, type X402Payment } from '@facilitator/verification';
import { formOf, requireJsonObject } from '../request-body';

/**
 * A settle request, read once whatever route and form it came in. Every later step (settle protection,
 * the minimums, finding or making the verification, starting the settlement) works on this, never on the
 * body again, so no step can read a different merchant than another.
 */
export type SettleCommand =
  /** /v1 Form A: the payment itself, verified before by POST /v1/verify */
  | { kind: 'form-a'; payment: Payment }
  /** /x402 (v1 and v2): the payment itself; verified here when it was not before, as x402 facilitators do */
  | { kind: 'x402'; payment: Payment; x402: X402Payment }
  /** /v1 Form B: a verification by id */
  | { kind: 'form-b'; verificationId: string; destinationAddress: string };

export type X402SettleCommand = Extract<SettleCommand, { kind: 'x402' }>;

/** POST /v1/settle: Form A (`payment`/`requirements`) or Form B (`verification_id`). A 400 for anything else. */
export function parseV1SettleCommand(body: unknown, networks: EnabledNetworks): SettleCommand {
  const object = requireJsonObject(body);
  if (formOf(object, SETTLE_FORM_B_FIELDS) === 'form-a') return { kind: 'form-a', payment: paymentFromFormA(validateSettleFormA(object), networks, 'v1') };
  const { verification_id, destination_address } = validateSettleFormB(object);
  return { kind: 'form-b', verificationId: verification_id, destinationAddress: destination_address.toLowerCase() };
}

/** POST /x402/settle: a standard x402 request; X402RequestRejected (with its reason code) for anything else. */
export function parseX402SettleCommand(body: unknown, networks: EnabledNetworks): X402SettleCommand {
  const x402 = parseX402Request(body, networks);
  return { kind: 'x402', payment: x402.payment, x402 };
}

/**
 * What makes two settle requests the same payment's, read from the command alone (no lookup): the
 * mechanism's fingerprint of the authorization on its network, or Form B's verification id.
 */
export function settleRequestKey(command: SettleCommand): string {
  if (command.kind === 'form-b') return `verification:${command.verificationId}`;
  const { payment } = command;
  return `${payment.network.chainId}:${payment.mechanism.fingerprint(payment.payload, payment.network)}`;
}
