import { InvalidRequestError, NotFoundError, PaymentConflictError, UnauthorizedError, VerificationFailedError } from '@facilitator/core';
import type { Settlement, Verification, VerificationRepository } from '@facilitator/db';
import type { MerchantService } from '@facilitator/merchants';
import { fingerprintOf, type SettlementRequests } from '@facilitator/settlement';
import { amountBelowMinimum, type Payment, type PaymentIdentifiers, type X402VerificationFailure, type X402Verifier } from '@facilitator/verification';
import type { SettleCommand } from './settle-command';

/** The settle request may not go on because of the payment itself: answered as a verification failure. */
export class SettleRefused extends Error {
  constructor(
    readonly failure: X402VerificationFailure,
    /** the verification stored for this refusal, when one was (an x402 settle verifies first) */
    readonly verificationId?: string,
  ) {
    super(failure.message);
    this.name = 'SettleRefused';
  }
}

/** A settle key was needed and not given. */
export class SettleKeyRequired extends UnauthorizedError {
  constructor(readonly merchant: string) {
    super(`settle protection is on for ${merchant}: send its settle key as Authorization: Bearer <key>`);
  }
}

/** An upto amount below the maximum was named without the merchant's settle key (answered as SettleKeyRequired). */
export class PartialSettleKeyRequired extends SettleKeyRequired {
  constructor(merchant: string) {
    super(merchant);
    this.message = `only ${merchant} may settle less than the signed maximum of its payments: turn on settle protection (POST /v1/merchants/${merchant}/settle-key) and send its settle key as Authorization: Bearer <key>`;
  }
}

export interface SettleIntakeDeps {
  verifications: Pick<VerificationRepository, 'findById' | 'findLatestVerified'>;
  /** the x402 surface's requirements checks and inline verification */
  verifier: Pick<X402Verifier, 'checkRequirements' | 'verify'>;
  merchants: Pick<MerchantService, 'settleAccess' | 'minimumFor'>;
  requests: Pick<SettlementRequests, 'start' | 'liveSettlementOf' | 'recordNothingSettled'>;
  /** MIN_PAYMENT_AMOUNT (0n: no minimum), which a merchant's own minimum replaces */
  minPaymentAmount: bigint;
  /** binds the payment's x402 payment identifier, refusing one bound to another payment (409) */
  paymentIds?: Pick<PaymentIdentifiers, 'bind'>;
}

export interface Admitted {
  verification: Verification;
  settlement: Settlement;
  /** false: the payment's settlement existed already (a repeat, such as the x402 middleware's retry) */
  created: boolean;
}

/**
 * An x402 `upto` settle of 0: the merchant used nothing. The payment verified and nothing is sent or charged
 * (the reference answers success without a transaction); its permit stays unspent on chain, and only this
 * service may ever spend it (its witness names our facilitator address), so the 0 is recorded as the
 * payment's outcome: no later settle of it moves anything (issue 40, 7b).
 */
export interface NothingToSettle {
  verification: Verification;
  settlement: null;
}

/** Who is paid and how much, known before anything is looked up or stored for the payment. */
interface Target {
  merchant: string;
  amount: bigint;
  /** Form B names its verification, which is how its merchant is known */
  verification?: Verification;
}

/**
 * The one way a settle request gets in, for every route and form (docs/decisions.md, "One settle intake").
 * In order, each step on the parsed command, and nothing stored or enqueued before all pass:
 * 1. the merchant paid: Form A's and x402's `payTo`, Form B's verified merchant (a Form B id we do not
 *    know is a 404: there is no merchant to act for, so nothing goes on — the intake fails closed);
 * 2. settle protection: a merchant that turned it on needs its settle key;
 * 3. the verification of exactly this authorization (x402: verified here when it was not before), and
 *    its x402 payment identifier, if it has one, bound to it (the same id with another payment is a 409;
 *    the same id with the same payment goes on, to the one settlement of this payment);
 * 4. the minimum in force NOW (the merchant's own, else MIN_PAYMENT_AMOUNT) for a settlement to start: a
 *    verification stored while the merchant allowed less does not outlive its minimum, while a repeat of
 *    a payment whose settlement is already under way or done is answered with it (its buyer paid);
 * 5. the settlement of exactly this authorization (SettlementRequests.start refuses another one that
 *    shares its payer and nonce with a 409), for the amount the merchant settles: the signed amount, or
 *    (x402 upto) the requirements' amount, at most the signed maximum; the same payment asked to settle
 *    another amount than its settlement's is a 409 too, and 0 settles nothing (NothingToSettle).
 */
export class SettleIntake {
  constructor(private readonly deps: SettleIntakeDeps) {}

  async admit(command: SettleCommand, settleKey: string | undefined): Promise<Admitted | NothingToSettle> {
    const target = await this.targetOf(command);
    const access = await this.deps.merchants.settleAccess(target.merchant, settleKey);
    if (access === 'denied') throw new SettleKeyRequired(target.merchant);
    const settleAmount = command.kind === 'form-b' ? undefined : command.payment.settleAmount;
    // whoever holds an upto payload (its payer, first of all) could otherwise settle it for a token amount
    // before the merchant settles what was used: only the merchant, by its settle key, names less than the
    // maximum, 0 included (a 0 is the payment's final outcome: a stranger's would take the merchant's payment
    // away). Asked before anything about the payment is looked up, verified or bound
    if (settleAmount !== undefined && settleAmount < target.amount && access !== 'granted') throw new PartialSettleKeyRequired(target.merchant);
    // Form B's target is its verification; a payment's is looked up (or made) only once access passed
    const verification = command.kind === 'form-b' ? target.verification! : await this.verificationOf(command);
    // Form B names a verification, not a payment, and carries no extensions
    if (command.kind !== 'form-b') await this.deps.paymentIds?.bind(command.payment);
    await this.refuseBelowMinimum(target, verification);
    const surface = command.kind === 'x402' ? 'x402' : 'v1';
    if (settleAmount === 0n) return this.nothingToSettle(verification);
    const { settlement, created } = await this.deps.requests.start(verification, surface, settleAmount, { checkFunds: command.kind !== 'form-b' });
    return { verification, settlement, created };
  }

  /**
   * A settle of 0, unless the payment is already settling (or settled) another amount: that one is its outcome.
   * Otherwise the 0 is recorded, and every later settle of the payment is refused by it (SettlementRequests.start).
   */
  private async nothingToSettle(verification: Verification): Promise<NothingToSettle> {
    const live = await this.deps.requests.liveSettlementOf(verification);
    if (live) {
      throw new PaymentConflictError(`this payment's settlement ${live.id} moves ${live.amount}, not 0; settle it with its amount for its outcome`, {
        settlement_id: live.id,
        mechanism: verification.mechanism,
        settled_amount: live.amount,
        requested_amount: '0',
      });
    }
    await this.deps.requests.recordNothingSettled(verification);
    return { verification, settlement: null };
  }

  private async targetOf(command: SettleCommand): Promise<Target> {
    // the amount the merchant asks for: a verified authorization pays exactly it, and one that does not is
    // refused by verification with the spec's "amount mismatch" rather than by the minimum
    if (command.kind !== 'form-b') return { merchant: command.payment.expected.payTo, amount: command.payment.expected.amount };
    const verification = await this.deps.verifications.findById(command.verificationId);
    if (!verification) throw new NotFoundError(`no verification with id ${JSON.stringify(command.verificationId)}`);
    if (verification.status !== 'verified' || !verification.merchant || verification.amount === null) {
      throw new VerificationFailedError('only a verified payment can be settled', {
        verification_id: verification.id,
        reason: verification.failureMessage ?? 'verification was rejected',
      });
    }
    if (command.destinationAddress !== verification.merchant) {
      throw new InvalidRequestError('destination_address must be the verified merchant: the signed authorization fixes the recipient', {
        errors: [{ path: '/destination_address', message: `must be ${verification.merchant}` }],
      });
    }
    return { merchant: verification.merchant, amount: BigInt(verification.amount), verification };
  }

  private async refuseBelowMinimum(target: Target, verification: Verification): Promise<void> {
    const minimum = (await this.deps.merchants.minimumFor(target.merchant)) ?? this.deps.minPaymentAmount;
    const failure = amountBelowMinimum(target.amount, minimum);
    if (!failure) return;
    // a repeat (the x402 middleware's retry of a pending settle, a client asking again) reads what became of
    // a settlement that already started: refusing it would refuse a buyer whose payment goes through
    if (await this.deps.requests.liveSettlementOf(verification)) return;
    throw new SettleRefused(failure, target.verification?.id);
  }

  private async verificationOf(command: Exclude<SettleCommand, { kind: 'form-b' }>): Promise<Verification> {
    if (command.kind === 'x402') {
      const refused = await this.deps.verifier.checkRequirements(command.x402);
      if (refused) throw new SettleRefused(refused);
    }
    const found = await this.findVerificationOf(command.payment);
    if (found) return found;
    if (command.kind === 'form-a') throw new NotFoundError('no successful verification of this payment; call POST /v1/verify first');
    // the x402 "upfront" flow, or a client that skips /verify: x402 facilitators verify at settle
    const outcome = await this.deps.verifier.verify(command.x402);
    if (outcome.failure) throw new SettleRefused(outcome.failure, outcome.record.id);
    return outcome.record;
  }

  /**
   * The successful verification of exactly this payment: the same authorization (its fingerprint) and
   * requirements. Another signature over the same authorization (a malleable ECDSA `s`, a wallet whose
   * ERC-1271 signatures differ each time) is the same payment: it moves the same money to the same merchant,
   * and the settlement uses the signature that was verified.
   */
  private async findVerificationOf(payment: Payment): Promise<Verification | null> {
    const { network, terms, expected } = payment;
    const fingerprint = payment.mechanism.fingerprint(payment.payload, network);
    const found = await this.deps.verifications.findLatestVerified({
      chainId: network.chainId,
      nonceSpace: terms.nonce.space,
      payer: terms.nonce.payer,
      nonce: terms.nonce.value,
      authorizationFingerprint: fingerprint,
    });
    const matches =
      found !== null &&
      // a row of an older process has no fingerprint stored: its columns decide
      fingerprintOf(found) === fingerprint &&
      found.merchant === expected.payTo &&
      found.expectedAmount === expected.amount.toString();
    return matches ? found : null;
  }
}
