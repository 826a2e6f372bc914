import { FeeCollectionFailedError, IdPrefix, InvalidRequestError, newId, RateLimitedError, NotFoundError, PaymentConflictError, SettlementFailedError } from '@facilitator/core';
import { authorizationFingerprint, servedMechanismById } from '@facilitator/payment-mechanisms';
import type { NothingSettledRepository, PaymentNonce, Settlement, SettlementRequestStore, Verification } from '@facilitator/db';
import { enqueueSettlement, type Queues } from '@facilitator/queue';
import { failurePauseOf, type FailureCounts, type FailurePausePolicy } from './accounting';
import { failurePaused } from './failures';
import { intakeRefusalError, type IntakeFundsCheck } from './intake-funds-check';
import { paymentKeyOf } from './payment-key';

/**
 * The payment's nonce identity (db's PaymentNonce) of a verified verification: the contract that records
 * its nonce, or, for a row an older process stored without one, its token (an EIP-3009 nonce's).
 */
function paymentNonceOf(v: Verification): PaymentNonce {
  return { chainId: v.chainId, nonceSpace: v.nonceSpace ?? v.tokenAddress!, payer: v.payer!, nonce: v.nonce! };
}

/** The payment key of a verified verification (paymentKeyOf: by its network's family). */
function settlementPaymentKey(v: Verification): string {
  return paymentKeyOf({ network: v.network, ...paymentNonceOf(v) });
}

/**
 * The fingerprint of a verified verification's authorization: stored with it, or (a row written by a
 * process older than the payment identity migration, during a rolling deploy) computed from its columns —
 * a verified row's merchant is its authorization's recipient.
 */
export function fingerprintOf(v: Verification): string {
  if (v.authorizationFingerprint) return v.authorizationFingerprint;
  if (!v.tokenAddress || !v.payer || !v.merchant || v.amount === null || v.validAfter === null || v.validBefore === null || !v.nonce) {
    throw new Error(`verification ${v.id} lacks the fields of its authorization`);
  }
  return authorizationFingerprint(v.chainId, v.tokenAddress, {
    from: v.payer,
    to: v.merchant,
    value: BigInt(v.amount),
    validAfter: BigInt(v.validAfter),
    validBefore: BigInt(v.validBefore),
    nonce: v.nonce,
  });
}

/**
 * Whether the live settlement of the payment's (payer, nonce) executes this very authorization. A row
 * without a fingerprint (made by an older process during a rolling deploy) is judged by what it pays:
 * the same merchant and amount (its validity is not on the row).
 */
function isSettlementOf(s: Settlement, v: Verification, fingerprint: string): boolean {
  if (s.authorizationFingerprint) return s.authorizationFingerprint === fingerprint;
  return s.merchant === v.merchant && s.amount === v.amount;
}

/** Whether the verified payment's signed amount is a maximum the merchant settles part of (upto). */
const signsMaximum = (v: Verification) => servedMechanismById(v.mechanism)?.signedAmount === 'maximum';

const HOUR_MS = 60 * 60_000;
/** a fee-free settle beyond the budget is asked to come back in a few minutes: the hour rolls */
const FEE_FREE_RETRY_SECONDS = 300;

/**
 * Starts the settlement of a verified payment, or returns the one it already has: a payment is settled
 * at most once; a new attempt starts only after an earlier one failed before any fee was taken.
 */
export class SettlementRequests {
  constructor(
    private readonly settlements: SettlementRequestStore,
    private readonly queues: Pick<Queues, 'settlement'>,
    private readonly feeAmount: bigint,
    /** a payment whose fee transfer reverted waits this long before another try, doubling per revert */
    private readonly feeRevertBackoffMs = 60_000,
    /** the failure accounting's pause and the counts it reads (see accounting.ts); absent: only the fee-revert back-off applies */
    private readonly failurePause?: { policy: FailurePausePolicy; counts: FailureCounts },
    /** settlements charged no fee allowed per rolling hour, per merchant and in all; absent: no budget */
    private readonly feeFreeBudget?: { perMerchant: number; total: number },
    /** the upto payments settled for 0; absent: a 0 is not recorded (and a later settle is not refused) */
    private readonly nothingSettled?: Pick<NothingSettledRepository, 'record' | 'isRecorded'>,
    /** the pre-flight's cheapest refusals, asked before anything is stored; absent: only the worker asks */
    private readonly fundsCheck?: Pick<IntakeFundsCheck, 'refusalOf'>,
  ) {}

  /**
   * Records an upto settle of 0 as the payment's outcome: nothing is sent, and no later settle of the payment
   * (whoever holds its payload, for any amount) moves anything. The caller has checked that no settlement of
   * the payment lives, and that the merchant asked (its settle key).
   */
  async recordNothingSettled(v: Verification): Promise<void> {
    await this.nothingSettled?.record({ paymentKey: settlementPaymentKey(v), chainId: v.chainId, merchant: v.merchant!, verificationId: v.id });
  }

  /** Whether the payment was settled for 0 (its outcome: nothing moves, ever). */
  async wasSettledForNothing(v: Verification): Promise<boolean> {
    return (await this.nothingSettled?.isRecorded(settlementPaymentKey(v))) ?? false;
  }

  /**
   * The settlement of exactly this verification's authorization. The live settlement of its (payer, nonce)
   * may be of another authorization the payer also signed (another recipient or value): that one is never
   * reported as this one's — a merchant would be told "paid" with another payment's outcome — and this one
   * cannot start while it lives (PaymentConflictError, 409).
   *
   * `settleAmount`: what the merchant settles of a payment that signs a maximum (upto), more than 0 and at
   * most the maximum; absent: the signed amount. The settlement stores it, and its fee (`feeFor`): both are
   * what every step charges and moves, and what it reports. The same payment asked for another amount while
   * its settlement lives is a 409: the first amount is the one that moves.
   */
  async start(
    verification: Verification,
    surface: string,
    settleAmount?: bigint,
    /**
     * ask the chain first (IntakeFundsCheck) and refuse, storing nothing, what cannot settle now: for the requests
     * that wait for their outcome anyway (Form A, x402). Form B answers `pending` at once with its settlement, whose
     * failure the merchant then reads and is told of by webhook, as the spec's states have it
     */
    options: { checkFunds?: boolean } = {},
  ): Promise<{ settlement: Settlement; created: boolean }> {
    const fingerprint = fingerprintOf(verification);
    const amount = this.amountToSettle(verification, settleAmount);
    if (signsMaximum(verification) && (await this.wasSettledForNothing(verification))) {
      throw new PaymentConflictError(`this payment was settled for 0, not ${amount}: its merchant used nothing, and only one amount of a payment is ever settled`, {
        mechanism: verification.mechanism,
        settled_amount: '0',
        requested_amount: amount.toString(),
        impact: 'nothing was sent; the payment\'s outcome is the settle of 0',
      });
    }
    const feeAmount = this.feeFor(verification, amount);
    // only an amount below a real fee is fee-free (FEE_AMOUNT=0 makes every settlement free, and none is budgeted)
    if (feeAmount === 0n && this.feeAmount > 0n) await this.refuseBeyondFeeFreeBudget(verification);
    await this.refuseDuringFeeRevertBackoff(verification);
    await this.refuseWhilePaused(verification);
    if (options.checkFunds) await this.refuseWithoutFunds(verification, amount, feeAmount);
    const result = await this.settlements.createOrGetForPayment({
      id: newId(IdPrefix.Settlement),
      verificationId: verification.id,
      paymentKey: settlementPaymentKey(verification),
      surface,
      chainId: verification.chainId,
      network: verification.network,
      tokenAddress: verification.tokenAddress!,
      payer: verification.payer!,
      merchant: verification.merchant!,
      amount: amount.toString(),
      nonce: verification.nonce!,
      authorizationFingerprint: fingerprint,
      mechanism: verification.mechanism,
      scheme: verification.scheme,
      nonceSpace: paymentNonceOf(verification).nonceSpace,
      payload: (verification.payload as object | null) ?? null,
      feeAmount: feeAmount.toString(),
      metadata: (verification.metadata as object | null) ?? undefined,
    }).catch((err: unknown) => {
      // a foreign key violation: retention deleted the verification between its lookup and this insert (it
      // keeps an unsettled one at most RETENTION_UNSETTLED_VERIFICATIONS_DAYS): verify again, as for any unknown one
      if ((err as { code?: unknown }).code === '23503') throw new NotFoundError('the verification of this payment is no longer kept; call POST /v1/verify again');
      throw err;
    });
    if (!isSettlementOf(result.settlement, verification, fingerprint)) {
      throw new PaymentConflictError('the payer signed another authorization with this nonce, which is being settled or was settled; only one of them can ever be paid', {
        payer: verification.payer,
        nonce: verification.nonce,
        mechanism: verification.mechanism,
        reason: 'another authorization with the same payer and nonce (another recipient, value or validity) owns this payment',
        impact: 'nothing was sent for this authorization; settle again once the other one has ended, or ask the payer to pay with a fresh nonce',
      });
    }
    if (result.settlement.amount !== amount.toString()) {
      throw new PaymentConflictError(`this payment's settlement ${result.settlement.id} moves ${result.settlement.amount}, not ${amount}; only one amount of a payment is ever settled`, {
        settlement_id: result.settlement.id,
        mechanism: verification.mechanism,
        settled_amount: result.settlement.amount,
        requested_amount: amount.toString(),
        impact: 'nothing more was sent; settle it with its amount for its outcome',
      });
    }
    // enqueued on every call: the job id is the settlement id, so this only ever makes one job,
    // and it revives a settlement whose job was lost
    if (result.settlement.state !== 'settled' && result.settlement.state !== 'failed') {
      await enqueueSettlement(this.queues, result.settlement.id);
    }
    return result;
  }

  /**
   * The one fee policy: the flat fee, decided here once and stored with the settlement. A payment that signs a
   * maximum (upto) pays it only when the amount settled is at least the fee: metered use below it settles
   * free, rather than charging the merchant more than it was paid. An exact payment always pays it (its
   * merchant set its price; MIN_PAYMENT_AMOUNT and the merchant's minimum keep it above the fee).
   */
  private feeFor(verification: Verification, amount: bigint): bigint {
    return signsMaximum(verification) && amount < this.feeAmount ? 0n : this.feeAmount;
  }

  /**
   * The amount to settle: the verified (signed) amount, or the merchant's amount of a signed maximum, which a
   * settle must name: a request that names none (Form B, which names a verification) never takes the payer's
   * whole maximum.
   */
  private amountToSettle(verification: Verification, settleAmount: bigint | undefined): bigint {
    const signed = BigInt(verification.amount!);
    if (settleAmount === undefined && signsMaximum(verification)) {
      throw new InvalidRequestError(`an ${verification.scheme} payment settles the amount its merchant names: settle it through POST /x402/settle with paymentRequirements.amount`, {
        errors: [{ path: '', message: `verification ${verification.id} is of a payment signed for at most ${signed}` }],
      });
    }
    if (settleAmount === undefined) return signed;
    // the x402 parser refused anything else (a settle of 0 is not started at all): this is a broken caller
    if (settleAmount <= 0n || settleAmount > signed) throw new Error(`verification ${verification.id}: cannot settle ${settleAmount} of a payment signed for at most ${signed}`);
    return settleAmount;
  }

  /**
   * A settlement charged no fee costs the treasury its gas and earns nothing, and whoever controls a payer and
   * a merchant could make them in a loop: each merchant, and all of them together, get so many an hour. A
   * repeat of a payment whose settlement exists is not counted again (it makes none).
   */
  private async refuseBeyondFeeFreeBudget(v: Verification): Promise<void> {
    if (!this.feeFreeBudget) return;
    if (await this.settlements.findLiveForPayment(settlementPaymentKey(v))) return;
    const counts = await this.settlements.feeFreeSince(v.merchant!, new Date(Date.now() - HOUR_MS));
    if (counts.merchant < this.feeFreeBudget.perMerchant && counts.all < this.feeFreeBudget.total) return;
    throw new RateLimitedError(FEE_FREE_RETRY_SECONDS);
  }

  /** The live settlement of exactly this verification's authorization, when one owns its payment now. */
  async liveSettlementOf(v: Verification): Promise<Settlement | null> {
    const live = await this.settlements.findLiveForPayment(settlementPaymentKey(v));
    return live && isSettlementOf(live, v, fingerprintOf(v)) ? live : null;
  }

  /**
   * A payer whose payments keep failing on chain (or a merchant, for payers that never paid it) is refused
   * here too, before a settlement is even stored; the worker checks again before anything is sent. A
   * payment that already has a live settlement is not refused: its settle only reads what became of it.
   */
  private async refuseWhilePaused(v: Verification): Promise<void> {
    if (!this.failurePause) return;
    const pause = await failurePauseOf(this.failurePause.counts, this.failurePause.policy, { payer: v.payer!, merchant: v.merchant!, chainId: v.chainId });
    if (!pause) return;
    const live = await this.settlements.findLiveForPayment(settlementPaymentKey(v));
    if (live) return;
    const failure = failurePaused(pause);
    throw new SettlementFailedError(failure.message, failure.details);
  }

  /**
   * A payment the chain says cannot settle now (the payer's balance below the amount, the merchant's allowance
   * or balance below the fee) is refused before its settlement is stored and enqueued, with the answer the
   * worker would give (IntakeFundsCheck). A payment that already has a live settlement is never refused: its
   * settle reads what became of it (its own transfer may be what spent the payer's balance).
   */
  private async refuseWithoutFunds(v: Verification, amount: bigint, fee: bigint): Promise<void> {
    if (!this.fundsCheck) return;
    const n = paymentNonceOf(v);
    const mechanism = servedMechanismById(v.mechanism);
    const failure = await this.fundsCheck.refusalOf({
      chainId: v.chainId, token: v.tokenAddress!, payer: v.payer!, merchant: v.merchant!, amount, fee,
      // a mechanism we do not serve, or one without a nonce space: its nonce cannot be asked, so a short payer
      // is not refused here either
      nonceUsed: (reads) => (mechanism?.nonce ? mechanism.nonce.isUsed({ space: n.nonceSpace, payer: n.payer, value: n.nonce }, reads) : Promise.resolve(true)),
    });
    if (!failure) return;
    if (await this.settlements.findLiveForPayment(settlementPaymentKey(v))) return;
    throw intakeRefusalError(failure);
  }

  /**
   * Griefing guard: a reverted fee transfer releases the payment (the merchant paid nothing), so without a
   * pause the same payment could be settled again at once, each try costing the treasury gas.
   */
  private async refuseDuringFeeRevertBackoff(v: Verification): Promise<void> {
    if (this.feeRevertBackoffMs === 0) return;
    const reverts = await this.settlements.feeRevertsOfPayment(paymentNonceOf(v));
    if (reverts.count === 0 || !reverts.lastAt) return;
    const retryAt = reverts.lastAt.getTime() + this.feeRevertBackoffMs * 2 ** Math.min(reverts.count - 1, 10);
    if (Date.now() >= retryAt) return;
    throw new FeeCollectionFailedError('a fee transfer for this payment reverted recently; settle it again later', {
      reason: 'fee transfer reverted; back-off in force',
      fee_reverts: reverts.count,
      retry_after: new Date(retryAt).toISOString(),
      impact: 'nothing was sent; no fee was collected and the payer was not charged',
    });
  }
}
