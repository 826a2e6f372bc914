import {
  approvalFor,
  evmExecutionOf,
  servedMechanismById,
  settleAmountProblem,
  type DirectCall,
  type MechanismChain,
  type MechanismNetwork,
  type ParsedPayment,
  type PaymentMechanism,
  type PaymentTerms,
} from '@facilitator/payment-mechanisms';
import type { SettlementWithVerification, StepContext } from './step';

/** The payment a settlement executes, and the mechanism that reads and executes it. */
export interface SettlementPayment {
  mechanism: PaymentMechanism<unknown>;
  parsed: ParsedPayment<unknown>;
}

/**
 * The payment a settlement executes: its own stored payload, read by its mechanism. A settlement started by
 * an older process during a rolling deploy has none; its mechanism (the only one then) rebuilds it, as
 * before, from its columns and its verification's validity and signature (`storedFromColumns`).
 *
 * The payload is what goes on chain; the columns are what the fee reservation, the accounting and the
 * answers read. They were written together from one verification, and a row where they disagree is refused
 * here, before anything is sent, rather than executing one payment while reporting another.
 */
export function paymentOf(settlement: SettlementWithVerification): SettlementPayment {
  const known = readOnce.get(settlement);
  if (known) return known;
  // a verify that found the nonce held rejects its row right after storing it; a settle that raced into
  // that moment copied the payload, but what the verify answered was "invalid" (see preflight)
  if (settlement.verification.status !== 'verified') {
    throw new Error(`settlement ${settlement.id}: its verification ${settlement.verificationId} was rejected; its payment is not executed`);
  }
  const network = { chainId: settlement.chainId, tokenAddress: settlement.tokenAddress.toLowerCase() };
  const payment = settlement.payload == null ? fromColumns(settlement, network) : fromPayload(settlement, network);
  readOnce.set(settlement, payment);
  return payment;
}

/**
 * Each settlement row, as the machine holds it for one step's run, is read by its mechanism once: the row's
 * payment never changes (a settlement owns its parameters), and every helper a step calls asks for it again.
 * A moved settlement is a new row object, read anew.
 */
const readOnce = new WeakMap<SettlementWithVerification, SettlementPayment>();

/** The payment's terms: payer, payee, amount, validity and nonce, whatever its mechanism. */
export function termsOf(settlement: SettlementWithVerification): PaymentTerms {
  return paymentOf(settlement).parsed.terms;
}

/**
 * The call that executes the settlement's payment for the amount the settlement owns (its row's `amount`:
 * the signed amount, or what the merchant settles of an upto maximum), and the only sender it may have;
 * `withPermit`: with the payer's approval permit in the same call (`sendsPermit` says when).
 */
export function directCallOf(settlement: SettlementWithVerification, chain: MechanismChain, withPermit = false): DirectCall {
  const { mechanism, parsed } = paymentOf(settlement);
  return evmExecutionOf(mechanism).directCall(parsed, chain, { amount: BigInt(settlement.amount), ...(withPermit ? { withPermit } : {}) });
}

/**
 * Whether the settlement's payment goes with the payer's approval permit (x402's eip2612GasSponsoring: the
 * EIP-2612 permit for Permit2 it was verified with): only when it carries one, the payer's allowance is
 * now short of the amount, and the token would take the permit (its nonce is the payer's next), as read
 * now. A payment without a permit reads nothing and is sent as before.
 */
export async function sendsPermit(ctx: StepContext): Promise<boolean> {
  const { mechanism, parsed } = paymentOf(ctx.settlement);
  if (!mechanism.approval?.permit?.(parsed.payload)) return false;
  return approvalFor(await mechanism.approval.read(parsed, ctx.network.usdc), BigInt(ctx.settlement.amount)).withPermit;
}

/** The signature as the payer sent it (ERC-6492-wrapped or not). */
export function rawSignatureOf(settlement: SettlementWithVerification): string {
  return paymentOf(settlement).parsed.signature;
}

/** The network as the step's mechanism reads logs on it: the token this worker settles there. */
export function mechanismNetworkOf(ctx: StepContext): MechanismNetwork {
  return { chainId: ctx.network.chainId, tokenAddress: ctx.network.usdc.tokenAddress.toLowerCase() };
}

function fromPayload(settlement: SettlementWithVerification, network: MechanismNetwork): SettlementPayment {
  // an id this worker does not know (a newer process stored it), or registers but serves on no network
  // (upto/permit2: the engine does not settle an amount below the maximum yet), has no mechanism here
  const mechanism = servedMechanismById(settlement.mechanism);
  if (!mechanism) {
    throw new Error(`settlement ${settlement.id} is a payment of mechanism ${settlement.mechanism}, which this worker cannot execute`);
  }
  const parsed = mechanism.fromStored(settlement.payload, network);
  const { terms } = parsed;
  const columns = { payer: settlement.payer, merchant: settlement.merchant, token: settlement.tokenAddress, nonce: settlement.nonce };
  const signed = { payer: terms.payer, merchant: terms.payee, token: terms.token, nonce: terms.nonce.value };
  for (const field of Object.keys(columns) as Array<keyof typeof columns>) {
    if (columns[field].toLowerCase() !== signed[field]) {
      throw new Error(`settlement ${settlement.id}: its stored payment's ${field} (${signed[field]}) is not its row's (${columns[field]})`);
    }
  }
  // the row's amount is what settles: the signed amount, or (a signed maximum) what the merchant asked, within it
  const problem = settleAmountProblem(mechanism, terms, BigInt(settlement.amount));
  if (problem) throw new Error(`settlement ${settlement.id}: its row's amount does not fit its stored payment: ${problem}`);
  return { mechanism, parsed };
}

/** The payment as the payload column's backfill writes it, from the row and its verification, by its mechanism. */
function fromColumns(settlement: SettlementWithVerification, network: MechanismNetwork): SettlementPayment {
  const mechanism = servedMechanismById(settlement.mechanism);
  if (!mechanism?.storedFromColumns) {
    throw new Error(`settlement ${settlement.id} is a payment of mechanism ${settlement.mechanism} without a stored payload`);
  }
  const v = settlement.verification;
  if (!v.signature) throw new Error(`verification ${settlement.verificationId} has no signature`);
  const stored = mechanism.storedFromColumns({
    payer: settlement.payer,
    payee: settlement.merchant,
    amount: settlement.amount,
    validAfter: v.validAfter ?? '0',
    validBefore: v.validBefore ?? '0',
    nonce: settlement.nonce,
    signature: v.signature,
  });
  return { mechanism, parsed: mechanism.fromStored(stored, network) };
}
