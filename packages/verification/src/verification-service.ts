import { rpcUnavailable } from '@facilitator/core';
import { MechanismAvailability, missingApproval, type PaymentReads } from '@facilitator/payment-mechanisms';
import type { SettlementRequestStore, VerificationRepository, VerificationRow } from '@facilitator/db';
import type { ChainReader } from './chain-reader';
import { checkAmount, checkApprovalPermit, checkMinimum, checkPayerSignature, checkRecipient, checkSignature, checkSender, checkSpender, checkTime, checkToken, OfflineCheckContext } from './checks';
import { FailureReason, VerificationFailure } from './failure-reasons';
import type { Payment } from './payment';
import type { PaymentIdentifiers } from './payment-identifiers';
import { timedFrom, verificationRecordOf, type Timed } from './verification-record';

export interface VerificationOutcome {
  record: VerificationRow;
  failure?: VerificationFailure;
}

/** Told about each stored verification, e.g. to emit webhook events. Must not throw. */
type VerificationListener = (outcome: VerificationOutcome, payment: Payment) => Promise<void>;

/** What verification stores through (VerificationRepository): narrowed so tests can pass an in-memory one. */
export type VerificationStore = Pick<VerificationRepository, 'create' | 'createCheckingNonce' | 'reject'>;

export interface VerificationServiceOptions {
  chain: ChainReader;
  verifications: VerificationStore;
  /** only asked which settlement of ours used a nonce the chain reports used */
  settlements: Pick<SettlementRequestStore, 'findNonceUse'>;
  treasuryAddress: string;
  expiryMarginSeconds: number;
  /** MIN_PAYMENT_AMOUNT: payments below it are refused (0n: no minimum) */
  minPaymentAmount: bigint;
  /** a merchant's own minimum, when it set one (undefined: the default applies) */
  merchantMinimum?: (merchant: string) => Promise<bigint | undefined>;
  /** Unix seconds; injectable for tests. */
  now?: () => number;
  onVerified?: VerificationListener;
  /** binds a valid payment's x402 payment identifier; a conflict is thrown (409), after the row is stored */
  paymentIds?: Pick<PaymentIdentifiers, 'bind'>;
}

/** Runs the spec's checks 2–7 in order on a well-formed payment (check 1), and stores the result. */
export class VerificationService {
  private readonly now: () => number;
  /** which mechanisms each network serves (their contracts exist there): shared with /x402/supported */
  readonly availability: MechanismAvailability;

  constructor(private readonly options: VerificationServiceOptions) {
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.availability = new MechanismAvailability((chainId) => this.readsOn(chainId));
  }

  async verify(payment: Payment): Promise<VerificationOutcome> {
    const checked = await this.checkAndStore(payment, timedFrom(performance.now()));
    const outcome = checked.failure ? { ...checked, failure: { ...checked.failure, mechanism: payment.mechanism.id } } : checked;
    // only a valid payment claims its id: an invalid one (a typo, a stranger's junk) cannot squat it
    if (!outcome.failure) await this.options.paymentIds?.bind(payment);
    await this.options.onVerified?.(outcome, payment);
    return outcome;
  }

  /**
   * Check 2 asks the chain whether the payer has code (USDC then asks it by ERC-1271, not its key); checks
   * 3–6 need nothing but the payment. A payment its key signed that passes 3–6 asks check 7's question at
   * the same moment, so both share one JSON-RPC batch; anything else never asks about the nonce (a
   * stranger's junk costs one read, not two). Then the row is stored and a settlement of ours that used the
   * nonce looked for in one database round trip; only the rare used-nonce case costs a second one.
   */
  private async checkAndStore(payment: Payment, timed: Timed): Promise<VerificationOutcome> {
    const { verifications, chain } = this.options;
    const { nonce } = payment.terms;
    const ctx = await this.contextOf(payment);
    const signed = checkSignature(ctx);
    const offline = checkRecipient(ctx) ?? checkAmount(ctx) ?? checkMinimum(ctx) ?? checkToken(ctx) ?? checkSpender(ctx) ?? checkSender(ctx) ?? checkTime(ctx) ?? checkApprovalPermit(ctx);
    const nonceUse = signed.failure || offline ? undefined : this.ask(payment, () => this.isNonceUsed(payment));
    nonceUse?.catch(() => undefined); // awaited below, once check 2 passed
    const approval = signed.failure || offline ? undefined : this.ask(payment, () => this.unmetPrerequisite(payment));
    approval?.catch(() => undefined);
    // the spec's order: a bad signature is reported before anything else
    const failure = (await this.ask(payment, () => checkPayerSignature(chain, ctx, signed))) ?? offline;
    if (failure) return { record: await verifications.create(timed(verificationRecordOf(payment, failure))), failure };

    // a contract wallet's payment (its key did not sign) asks only now that its wallet accepted it
    const unapproved = await (approval ?? this.ask(payment, () => this.unmetPrerequisite(payment)));
    if (unapproved) return { record: await verifications.create(timed(verificationRecordOf(payment, unapproved))), failure: unapproved };
    const usedOnChain = await (nonceUse ?? this.ask(payment, () => this.isNonceUsed(payment)));
    if (usedOnChain) {
      const ours = await this.options.settlements.findNonceUse({ chainId: payment.network.chainId, nonceSpace: nonce.space, payer: nonce.payer, nonce: nonce.value });
      const nonceFailure = nonceUsed(nonce.value, ours?.id ?? null);
      return { record: await verifications.create(timed(verificationRecordOf(payment, nonceFailure))), failure: nonceFailure };
    }
    const stored = await verifications.createCheckingNonce(timed(verificationRecordOf(payment, undefined)));
    if (stored.usedBy === null && stored.heldBy === null) return { record: stored.record };
    const nonceFailure = stored.usedBy !== null ? nonceUsed(nonce.value, stored.usedBy) : nonceHeld(nonce.value);
    return { record: await verifications.reject(stored.record.id, nonceFailure.message, nonceFailure.details), failure: nonceFailure };
  }

  /**
   * Check 7's question: can the payment's nonce never execute again? Asked by its mechanism of the contract
   * that records it (an EIP-3009 nonce: the token's authorizationState; a Permit2 one: Permit2's bitmap).
   */
  private isNonceUsed(payment: Payment): Promise<boolean> {
    // a mechanism without a nonce space on chain (`nonce`: every EVM one has one) has nothing to ask here
    const { nonce } = payment.mechanism;
    return nonce ? nonce.isUsed(payment.terms.nonce, this.readsOn(payment.network.chainId)) : Promise.resolve(false);
  }

  /**
   * Check 7b, ours: a payment its mechanism could never execute is refused though its signature is valid —
   * the contract it settles through is missing on this chain (asked until it is found, then known), or the
   * payer has not approved what the mechanism moves (Permit2's allowance).
   */
  private async unmetPrerequisite(payment: Payment): Promise<VerificationFailure | undefined> {
    const unavailable = await this.unavailable(payment);
    if (unavailable) return unavailable;
    const missing = await missingApproval(payment.mechanism, payment, this.readsOn(payment.network.chainId));
    if (!missing) return undefined;
    return {
      reason: FailureReason.AllowanceRequired,
      message: 'allowance required',
      details: {
        token: missing.token,
        spender: missing.spender,
        allowance: missing.allowance.toString(),
        required: missing.required.toString(),
        reason:
          `the payer has approved ${missing.spender} for ${missing.allowance} of the token, and the payment needs ${missing.required}; approve it first` +
          (payment.mechanism.approval?.permit?.(payment.payload) ? " (the payment's permit for it is one the token no longer takes: its nonce is not the payer's next)" : ''),
      },
    };
  }

  private async unavailable(payment: Payment): Promise<VerificationFailure | undefined> {
    const { mechanism, network } = payment;
    // a contract once found stays known (they are immutable at their canonical addresses); a missing one is asked again
    const problem = await this.availability.problem(network.chainId, mechanism);
    return problem ? { reason: FailureReason.MechanismUnavailable, message: 'payment mechanism unavailable', details: { mechanism: mechanism.id, reason: problem } } : undefined;
  }

  /** What a mechanism reads about a payment, on the verification hot path's batched client. */
  private readsOn(chainId: number): PaymentReads {
    const { chain } = this.options;
    return {
      isAuthorizationUsed: (payer, nonce) => chain.isAuthorizationUsed(chainId, payer, nonce),
      readContract: (to, data) => chain.readContract(chainId, to, data),
    };
  }

  /**
   * What checks 2–6 read: the signing domain when the mechanism's signature is checked offline (the token's, pinned and cached, unless the mechanism has its own), the treasury, the clock and the
   * merchant's minimum; and the token's domain when the payment carries an approval permit signed under it.
   */
  private async contextOf(payment: Payment): Promise<OfflineCheckContext> {
    const { mechanism, network } = payment;
    const tokenDomain = () => this.ask(payment, () => this.options.chain.domainSeparator(network.chainId));
    return {
      payment,
      ...(mechanism.signature ? { domainSeparator: mechanism.signature.ownDomainSeparator?.(network) ?? (await tokenDomain()) } : {}),
      ...(mechanism.approval?.permit?.(payment.payload) ? { tokenDomainSeparator: await tokenDomain() } : {}),
      treasury: this.options.treasuryAddress,
      nowSeconds: BigInt(this.now()),
      marginSeconds: BigInt(this.options.expiryMarginSeconds),
      minimumAmount: await this.minimumFor(payment),
    };
  }

  private async minimumFor(payment: Payment): Promise<bigint> {
    const own = this.options.merchantMinimum ? await this.options.merchantMinimum(payment.expected.payTo) : undefined;
    return own ?? this.options.minPaymentAmount;
  }

  /** A chain that cannot be asked is our problem, not an invalid payment: 503. */
  private async ask<T>(payment: Payment, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw rpcUnavailable(payment.network.caip2, err);
    }
  }
}

/**
 * Check 7, as payment identity extends it: the payer signed another authorization with this nonce (another
 * recipient, value or validity) and that one is verified or being settled. Only one of the two can ever
 * execute; answering "valid" for this one would let a merchant believe it will be paid by the other. The
 * holder's id is not named: it is another merchant's payment.
 */
function nonceHeld(nonce: string): VerificationFailure {
  return {
    reason: FailureReason.NonceHeld,
    message: 'nonce already used',
    details: {
      nonce,
      reason: 'the payer signed another authorization with this nonce, which is verified or being settled; only one of them can ever be paid',
    },
  };
}

/** Check 7's failure: the nonce was used by a settlement of ours (`settlementId`), or on chain. */
function nonceUsed(nonce: string, settlementId: string | null): VerificationFailure {
  return {
    reason: FailureReason.NonceUsed,
    message: 'nonce already used',
    details: {
      nonce,
      reason: settlementId ? 'the authorization was already used by a settlement' : 'the authorization was already used or cancelled on chain',
      ...(settlementId ? { settlement_id: settlementId } : {}),
    },
  };
}
