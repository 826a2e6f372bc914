import { GasCapExceededError, TransactionWouldRevertError, type TransactionRequest } from '@facilitator/evm-sending';
import { approvalCommands } from '../approval-command';
import { SettlementEndedError } from '../settlement-ended';
import { termsOf } from '../payment';
import { admissionDigest } from '../settlement-admission';
import { preflightChecks } from './preflight';
import { failed, feeCollectionFailed, insufficientAllowance, settlementDoomed } from '../failures';
import type { Step, StepContext } from '../step';
import { authorizationStillValid, waitForGas, waitForRelayers } from '../waiting';
import type { StepResult, StepAwait, StepWait } from '../step-outcome';
import { SettlementWaitReason } from '../wait-reasons';

/**
 * `collect_fee`: `transferFrom(merchant, treasury, fee)` sent by the treasury. The transaction provider
 * is idempotent per settlement, so a retry after a crash (or after its job gave up its slot to await the
 * fee's block) finds the fee already sent and only looks for its outcome.
 */
export const collectFee: Step = async (ctx) => {
  if (ctx.policy.feeAmount === 0n) return noFee(ctx);
  const sent = await ctx.chain.transactions.find(ctx.settlement.id, 'fee');
  if (sent) return awaitFee(ctx, sent.id);
  const aboveOurs = feeAboveOurs(ctx);
  if (aboveOurs) return aboveOurs;
  const unadmitted = await notAdmitted(ctx);
  if (unadmitted) return unadmitted;
  // a fee stored but not signed yet (a crash after its nonce was taken; a relayer server that has not signed)
  // will still be sent: later nonces of the treasury wait on it. It is finished, never failed around: a
  // settlement reported failed must not be charged afterwards. Without the key here, submit throws and the
  // job is retried (by a worker with the key) or parked for an operator, never failed.
  if (await ctx.chain.transactions.hasAny(ctx.settlement.id, 'fee')) return awaitFee(ctx, (await ctx.chain.transactions.submit(feeRequest(ctx))).id);
  const sending = await sendFee(ctx);
  return typeof sending === 'string' ? awaitFee(ctx, sending) : sending;
};

/**
 * The treasury charges at most this worker's own fee (FEE_AMOUNT): the row's fee is what the merchant was told,
 * but a database writer (a compromised API process) can raise it, and the treasury key must not sign a
 * transferFrom of a merchant's allowance for any amount a row names. Nothing was sent; the settlement fails
 * released (a fee lowered since the row was written is still charged as written, being below ours).
 */
function feeAboveOurs(ctx: StepContext): StepResult | undefined {
  if (ctx.policy.feeAmount <= ctx.policy.executorFee) return undefined;
  return failed(
    settlementDoomed("the settlement's fee is above this worker's fee (FEE_AMOUNT): the treasury does not charge it", {
      fee_amount: ctx.policy.feeAmount.toString(),
      worker_fee_amount: ctx.policy.executorFee.toString(),
    }),
    true,
  );
}

/**
 * The treasury charges a merchant only for a settlement whose payment this worker checked: its pre-flight
 * (signature, nonce, a simulation of the payment itself) passed here and sealed the row (preflight.ts). A row
 * without a seal that verifies (a keyless worker ran its pre-flight before a worker with the treasury key took
 * over; or a database writer put the row here, or copied another row's seal) is checked now, as the pre-flight
 * checks, before the treasury signs anything: a payment nobody signed, or one that cannot settle, ends here with
 * nothing sent. What passes is a real payer-signed payment to this merchant (a row's merchant is its signed
 * payee, payment.ts), which the fee pays for. Only such a row costs the pre-flight's reads again.
 */
async function notAdmitted(ctx: StepContext): Promise<Awaited<ReturnType<Step>> | undefined> {
  const seal = ctx.settlement.admission;
  if (seal && ctx.signers.admission?.verify(admissionDigest(ctx.settlement), seal)) return undefined;
  const checked = await preflightChecks(ctx);
  if (!('to' in checked)) return checked;
  if (checked.to === 'check_allowance') return undefined;
  if (checked.to === 'deploying_wallet') {
    // a payer's wallet is deployed before any fee: this row did not come the machine's way
    return failed(settlementDoomed("the payer's wallet is not deployed, and no fee is taken before it is", { admission: seal ? 'invalid' : 'missing' }), true);
  }
  return checked;
}

/**
 * A settlement whose fee is 0 (an upto amount below the fee: SettlementRequests.feeFor) sends nothing here. It
 * claims the right to send first, as a fee would: a settle request that stops unsent settlements and this
 * step never both win.
 */
async function noFee(ctx: StepContext): Promise<StepResult> {
  if (!authorizationStillValid(ctx)) {
    return failed(settlementDoomed('authorization expired before the payment could be sent', { validBefore: termsOf(ctx.settlement).validBefore.toString() }), true);
  }
  if (!ctx.signers.treasurySigns) {
    // only the sequential path settles without a fee, and it sends from the treasury, whose key this worker lacks
    return failed(settlementDoomed('the sequential path sends the payment from the treasury, whose key this worker does not hold', { path: 'sequential' }), true);
  }
  if (!(await ctx.records.claimSend())) throw new SettlementEndedError(ctx.settlement.id);
  return { to: 'fee_collected', note: { fee: '0', reason: 'the amount settled is below the fee: no fee is taken' } };
}

/**
 * What must hold before the merchant's fee goes on chain, on either path: the failure that makes sending
 * pointless, or the wait for the chain; when the fee may be sent, the merchant's token balance.
 */
export async function beforeFee(ctx: StepContext): Promise<StepResult | StepWait | bigint> {
  // a settlement that waited (gas above the cap) may have outlived its authorization: no fee for it then
  if (!authorizationStillValid(ctx)) {
    return failed(settlementDoomed('authorization expired before the fee could be sent', { validBefore: termsOf(ctx.settlement).validBefore.toString() }), true);
  }
  const gas = await waitForGas(ctx);
  if (gas) return gas;
  // no fee for a transfer that no relayer could send now: the merchant is not charged ahead of a long wait
  const relayers = await waitForRelayers(ctx);
  if (relayers) return relayers;
  const balance = await ctx.network.usdc.balanceOf(ctx.settlement.merchant);
  if (balance < ctx.policy.feeAmount) {
    return failed(feeCollectionFailed('merchant token balance is below the fee', balance, ctx.policy.feeAmount), true);
  }
  return balance;
}

/** The sequential fee: transferFrom(merchant, treasury, fee), sent by the treasury. */
function feeRequest(ctx: StepContext): TransactionRequest {
  const { usdc } = ctx.network;
  return {
    settlementId: ctx.settlement.id,
    purpose: 'fee',
    chainId: ctx.network.chainId,
    from: ctx.signers.treasury,
    to: usdc.tokenAddress,
    data: usdc.transferFromData(ctx.settlement.merchant, ctx.signers.treasury, ctx.policy.feeAmount),
    gasCap: ctx.network.gasCaps.fee,
  };
}

/** Sends the fee, or returns the failure that makes sending pointless, or the wait for the chain. */
async function sendFee(ctx: StepContext): Promise<string | StepResult | StepWait> {
  const balance = await beforeFee(ctx);
  if (typeof balance !== 'bigint') return balance;
  const held = await beforeSequentialFee(ctx);
  if (held) return held;
  if (!ctx.signers.treasurySigns) {
    // the path was fixed by a worker that held the treasury's key; this one cannot send the fee (nothing sent)
    return failed(settlementDoomed('the sequential path sends the fee from the treasury, whose key this worker does not hold', { path: 'sequential' }), true);
  }
  if (!(await ctx.records.claimSend())) throw new SettlementEndedError(ctx.settlement.id);
  try {
    const tx = await ctx.chain.transactions.submit(feeRequest(ctx));
    return tx.id;
  } catch (err) {
    if (err instanceof TransactionWouldRevertError) return wouldRevert(ctx, err.reason, balance);
    // the token itself would need more gas than a transferFrom may: nothing was sent
    if (err instanceof GasCapExceededError) return failed(feeCollectionFailed(err.message, balance, ctx.policy.feeAmount), true);
    throw err;
  }
}

/**
 * The sequential path only (the fee is its own transaction, sent by the treasury):
 * - no fee ahead of a contract-wallet payer's transfer (its code may fail the transfer after the fee is
 *   taken): such a payment reaches here only when the network left the atomic path after check_allowance;
 * - a delegated (EIP-7702) treasury sends one transaction at a time: geth-family pools admit one pending
 *   transaction of a delegated account, so a second would only be refused (docs/decisions.md).
 */
async function beforeSequentialFee(ctx: StepContext): Promise<StepResult | StepWait | undefined> {
  const accounting = ctx.policy.accounting;
  if (!accounting) return undefined;
  const [contractPayer, delegatedTreasury] = await Promise.all([ctx.chain.codeAt(ctx.settlement.payer), ctx.chain.codeAt(ctx.signers.treasury)]);
  if (contractPayer && accounting.sequentialContractPayers === 'refuse') {
    return failed(settlementDoomed('a contract-wallet payer is settled only on the atomic path', { payer_kind: 'contract', path: 'sequential' }), true);
  }
  if (!delegatedTreasury) return undefined;
  const unfinished = await accounting.unfinishedTransactionsOf(ctx.network.chainId, ctx.signers.treasury);
  if (unfinished === 0) return undefined;
  return { wait: { reason: SettlementWaitReason.TreasuryBusy, detail: { treasury: ctx.signers.treasury, unfinished_transactions: unfinished } } };
}

/**
 * The fee's estimate against the pending block reverted, so nothing was sent. When the allowance is what
 * ran out (another fee of this merchant was mined between our reading and our reservation), say so.
 */
export async function wouldRevert(ctx: StepContext, reason: string, balance: bigint, extra: StepResult['data'] = {}): Promise<StepResult> {
  const { merchant } = ctx.settlement;
  const available = await ctx.network.usdc.allowance(merchant, ctx.signers.treasury);
  if (available >= ctx.policy.feeAmount) return failed(feeCollectionFailed(reason, balance, ctx.policy.feeAmount), true, extra);
  const commands = approvalCommands(ctx.network.chainId, ctx.network.usdc.tokenAddress, ctx.signers.treasury, ctx.policy.feeAmount);
  return failed(insufficientAllowance({ required: ctx.policy.feeAmount, available, merchant, treasury: ctx.signers.treasury, ...commands }), true, extra);
}

async function awaitFee(ctx: StepContext, sent: string): Promise<StepResult | StepAwait> {
  const outcome = await ctx.chain.outcomes.within(sent, ctx.network.confirmations);
  if (outcome.status === 'pending') return { awaiting: outcome };
  if (outcome.status === 'confirmed') {
    return { to: 'fee_collected', data: { feeTxHash: outcome.hash, feeCollectedAt: new Date() }, note: { fee_tx_hash: outcome.hash } };
  }
  // a reverted transferFrom moved nothing: the merchant was not charged and may try again
  const balance = await ctx.network.usdc.balanceOf(ctx.settlement.merchant);
  return failed(feeCollectionFailed(outcome.reason ?? 'fee transfer reverted', balance, ctx.policy.feeAmount), true, {
    feeTxHash: outcome.hash,
  });
}
