import { ErrorCode, FeeCollectionFailedError, InsufficientAllowanceError, SettlementFailedError, type FacilitatorError } from '@facilitator/core';
import type { PaymentReads } from '@facilitator/payment-mechanisms';
import { approvalCommands } from './approval-command';
import { feeCollectionFailed, insufficientAllowance, settlementDoomed, type Failure } from './failures';

/** The token reads the check makes (RpcChainReader's lean batching client: reads of one turn go as one batch). */
export interface IntakeFundsReads {
  balanceOf(chainId: number, token: string, owner: string): Promise<bigint>;
  allowance(chainId: number, token: string, owner: string, spender: string): Promise<bigint>;
  /** asked only before a refusal (was the payment's nonce used: it may be paid already) */
  isAuthorizationUsed(chainId: number, payer: string, nonce: string): Promise<boolean>;
  readContract(chainId: number, to: string, data: string): Promise<string>;
}

/** What is about to be settled: who pays whom how much, and the fee the merchant pays for it. */
export interface IntakeFundsQuestion {
  chainId: number;
  token: string;
  payer: string;
  merchant: string;
  amount: bigint;
  fee: bigint;
  /**
   * Whether the payment's nonce is used on chain (its mechanism's question). A payment executed already (a
   * front-run, the payer's wallet, another facilitator: the merchant was paid) is the worker's to answer (paid
   * elsewhere), never refused here: not for a payer it left short, nor for a merchant without an allowance.
   */
  nonceUsed(reads: PaymentReads): Promise<boolean>;
}

/** A merchant's fee reads are reused this long when they covered the fee (a refusal is always read afresh). */
const MERCHANT_READ_REUSE_MS = 1_000;

/**
 * The pre-flight's cheapest refusals, asked before a settlement is stored and enqueued (issue 41, item 4): the
 * payer's token balance below the amount, the merchant's allowance to the treasury or its balance below the fee.
 * A settlement refused here would fail at the worker's pre-flight or allowance check with the same answer, after
 * a row, a job and the worker's reads; a flood of payments built to fail (unfunded throwaway payers, a payTo
 * without an allowance) now costs three batched reads each and nothing stored. Only ever a refusal of what
 * cannot settle now: a read that fails lets the payment in (the worker checks again, as it always does), and
 * the worker's checks stay the authority (balances change between here and there).
 */
export class IntakeFundsCheck {
  private readonly merchantReads = new Map<string, { at: number; allowance: bigint; balance: bigint }>();

  constructor(
    private readonly reads: IntakeFundsReads,
    private readonly treasury: string,
  ) {}

  /**
   * The failure this payment would meet before anything is sent, when the chain says so now. Asked in the
   * worker's order: a payment whose nonce is used was executed (or cancelled) already, which the worker's
   * pre-flight answers before any funds (paid elsewhere: the merchant was paid, and no fee is taken), so no
   * refusal stands for it here — whether the payer is short (the payment took its last funds) or the merchant.
   */
  async refusalOf(q: IntakeFundsQuestion): Promise<Failure | undefined> {
    try {
      const failure = await this.fundsRefusal(q);
      if (!failure || (await q.nonceUsed(this.paymentReads(q.chainId)))) return undefined;
      return failure;
    } catch {
      return undefined;
    }
  }

  private async fundsRefusal(q: IntakeFundsQuestion): Promise<Failure | undefined> {
    const [payerBalance, merchant] = await Promise.all([
      this.reads.balanceOf(q.chainId, q.token, q.payer),
      q.fee > 0n ? this.merchantFunds(q, false) : undefined,
    ]);
    if (payerBalance < q.amount) return settlementDoomed('payer balance insufficient', { payer_balance: payerBalance.toString(), amount: q.amount.toString() });
    if (!merchant || covers(merchant, q.fee)) return undefined;
    // a reused read said no: read afresh before refusing (the merchant may have just approved)
    return this.merchantRefusal(q, await this.merchantFunds(q, true));
  }

  private paymentReads(chainId: number): PaymentReads {
    return {
      isAuthorizationUsed: (payer, nonce) => this.reads.isAuthorizationUsed(chainId, payer, nonce),
      readContract: (to, data) => this.reads.readContract(chainId, to, data),
    };
  }

  private merchantRefusal(q: IntakeFundsQuestion, funds: { allowance: bigint; balance: bigint }): Failure | undefined {
    if (funds.allowance < q.fee) {
      const commands = approvalCommands(q.chainId, q.token, this.treasury, q.fee);
      return insufficientAllowance({ required: q.fee, available: funds.allowance, merchant: q.merchant, treasury: this.treasury, ...commands });
    }
    if (funds.balance < q.fee) return feeCollectionFailed('merchant token balance is below the fee', funds.balance, q.fee);
    return undefined;
  }

  private async merchantFunds(q: IntakeFundsQuestion, fresh: boolean): Promise<{ allowance: bigint; balance: bigint }> {
    const key = `${q.chainId}:${q.token}:${q.merchant}`.toLowerCase();
    const known = this.merchantReads.get(key);
    if (!fresh && known && Date.now() - known.at < MERCHANT_READ_REUSE_MS && covers(known, q.fee)) return known;
    const [allowance, balance] = await Promise.all([this.reads.allowance(q.chainId, q.token, q.merchant, this.treasury), this.reads.balanceOf(q.chainId, q.token, q.merchant)]);
    const read = { at: Date.now(), allowance, balance };
    if (this.merchantReads.size > 10_000) this.merchantReads.clear(); // bounded: strangers name any payTo they like
    this.merchantReads.set(key, read);
    return read;
  }
}

const covers = (funds: { allowance: bigint; balance: bigint }, fee: bigint) => funds.allowance >= fee && funds.balance >= fee;

/** The typed error of a refusal at intake: the same code, message and details the worker's failure would carry. */
export function intakeRefusalError(failure: Failure): FacilitatorError {
  const details = { ...failure.details, checked_at: 'settle request, before the settlement was stored' };
  if (failure.code === ErrorCode.InsufficientAllowance) return new InsufficientAllowanceError(failure.message, details);
  if (failure.code === ErrorCode.FeeCollectionFailed) return new FeeCollectionFailedError(failure.message, details);
  return new SettlementFailedError(failure.message, details);
}
