import { classifyNodeError, parseErc6492Signature, UntrustedCallTimeoutError, type SimulationResult } from '@facilitator/evm-chain';
import { approvalFor, approvalShortOf, type DirectCall } from '@facilitator/payment-mechanisms';
import { calldataGas } from '@facilitator/evm-executor';
import { directCallOf, paymentOf, type SettlementPayment } from '../payment';
import { failed, settlementDoomed } from '../failures';
import type { Step, StepContext } from '../step';
import { authorizationStillValid, noFundedRelayer } from '../waiting';
import { planWalletDeployment } from './wallet-deployment-plan';
import { admissionDigest } from '../settlement-admission';
import { unlessPaidElsewhere } from './settled-elsewhere';
import { pathOf } from './settlement-path';
import type { StepResult } from '../step-outcome';

/**
 * `pending`: before any fee, make sure the transfer can still succeed — its nonce unused on chain, not about
 * to expire, and an estimate of its mechanism's direct call from a relayer against the pending block passes
 * within the gas cap of its kind (a contract-wallet payer whose signature check burns gas is refused here).
 * A merchant must never pay for a doomed transfer, and the service never pays gas for one.
 *
 * The estimate runs as the real transfer will: with the fee fields the sending provider would sign (a
 * node simulates without them at tx.gasprice 0, which a wallet can tell from a real transaction and accept
 * only then) and within the gas limit the transfer may carry at most (its cap). A contract wallet whose
 * simulation does not finish in time is refused too; for an ordinary key that is the node's slowness.
 */
export const preflight: Step = async (ctx) => sealedOnPass(ctx, await preflightChecks(ctx));

/**
 * A settlement leaving the pre-flight for what comes next (the allowance check, or its wallet's deployment first)
 * carries this worker's seal over its payment, written in the same transition: the sequential fee is sent only
 * for a sealed row (collect-fee.ts), so a row a database writer inserted past the pre-flight is never charged.
 * The seal is the treasury's signature (a local key signs in-process; a KMS or HSM key is one signing call) or
 * the relayer server's API key's HMAC: no statement and no chain call is added.
 */
async function sealedOnPass(ctx: StepContext, result: Awaited<ReturnType<Step>>): Promise<Awaited<ReturnType<Step>>> {
  if (!ctx.signers.admission || !('to' in result) || (result.to !== 'check_allowance' && result.to !== 'deploying_wallet')) return result;
  const admission = await ctx.signers.admission.seal(admissionDigest(ctx.settlement));
  return { ...result, data: { ...result.data, admission } };
}

/** The pre-flight's checks alone (no seal): what collect_fee runs itself for a row it finds without this worker's seal. */
export const preflightChecks: Step = async (ctx) => {
  // a verify rejects its row after storing it when it finds the nonce held by another verified payment; a
  // settle that found the row in that instant must not execute what the verify answered was invalid
  if (ctx.settlement.verification.status !== 'verified') {
    return failed(settlementDoomed('the verification of this payment was rejected', { verification_id: ctx.settlement.verificationId }), true);
  }
  const { mechanism, parsed } = paymentOf(ctx.settlement);
  const { terms } = parsed;
  const { usdc } = ctx.network;
  // asked before the expiry: a payment someone else executed to the merchant (a front-run, the payer's wallet
  // sending it twice, another facilitator) is paid, whenever its authorization runs out; only a nonce used
  // without paying the merchant (or cancelled) is doomed. Asked of a mechanism with a nonce space (`nonce`:
  // every EVM one)
  if (mechanism.nonce && (await mechanism.nonce.isUsed(terms.nonce, usdc))) {
    return unlessPaidElsewhere(ctx, failed(settlementDoomed('authorization is used or canceled on chain'), true));
  }
  if (!authorizationStillValid(ctx)) {
    return failed(
      settlementDoomed('authorization expired', { validBefore: terms.validBefore.toString(), currentTime: String(ctx.policy.now()) }),
      true,
    );
  }
  // a call to a contract missing on this chain succeeds and moves nothing: refused before any fee
  const unavailable = await mechanism.availability?.unavailable(usdc);
  if (unavailable) return failed(settlementDoomed('the payment mechanism cannot execute on this chain', { mechanism: mechanism.id, problem: unavailable }), true);
  // a payer may withdraw what it approved after verify (Permit2's allowance), or have its approval permit
  // outdated by another (its nonce): said plainly, before any estimate. A payment whose permit covers what the
  // allowance lacks is sent with it (and estimated so)
  const amount = BigInt(ctx.settlement.amount);
  const approval = await mechanism.approval?.read(parsed, usdc);
  const missing = approvalShortOf(approval, amount);
  if (missing) {
    return failed(
      settlementDoomed('the payer no longer approves enough for the payment', {
        token: missing.token,
        spender: missing.spender,
        allowance: missing.allowance.toString(),
        required: missing.required.toString(),
      }),
      true,
    );
  }
  const withPermit = approval ? approvalFor(approval, amount).withPermit : false;
  // an ERC-6492 payer's wallet is deployed first; the transfer is estimated once it exists
  const wrapped = parseErc6492Signature(parsed.signature);
  if (wrapped && !(await ctx.chain.codeAt(terms.payer))) return planWalletDeployment(ctx, wrapped);
  const call = directCallOf(ctx.settlement, usdc, withPermit);
  const refusedSender = senderRefusal(ctx, call);
  if (refusedSender) return refusedSender;
  if (await estimateNotNeeded(ctx, paymentOf(ctx.settlement), withPermit)) return { to: 'check_allowance', note: { transfer_estimate: 'not needed: atomic path, ordinary-key payer', payer_kind: 'eoa' } };
  const [cap, fee] = await Promise.all([transferGasCap(ctx, call, withPermit), ctx.chain.transactions.networkFee(ctx.network.chainId)]);
  let estimate: SimulationResult | undefined;
  // with fee fields the node checks that the sender could pay for the gas: a relayer without ETH cannot
  // simulate, the next one is asked (the first is the usual one); a call with one sender is asked of it
  for (const sender of call.sender ? [call.sender] : ctx.signers.relayers) {
    try {
      estimate = await usdc.estimate(sender, call.data, call.to, { gasLimit: cap.gas, maxFeePerGasCap: fee.maxFeePerGasCap });
      break;
    } catch (err) {
      if (classifyNodeError(err).category === 'insufficient_funds') continue;
      if (!(err instanceof UntrustedCallTimeoutError) || cap.kind !== 'contract') throw err;
      return failed(settlementDoomed('the transfer simulation did not finish in time', { timeout_ms: err.timeoutMs, payer_kind: cap.kind }), true);
    }
  }
  if (!estimate) return noFundedRelayer(ctx);
  if ('revert' in estimate && estimate.outOfGas !== undefined) {
    return failed(
      settlementDoomed('transfer gas estimate is above its cap', { gas_estimate: `above ${estimate.outOfGas}`, gas_cap: cap.gas.toString(), payer_kind: cap.kind }),
      true,
    );
  }
  if ('revert' in estimate) return failed(settlementDoomed(estimate.revert, { simulation: call.gasKind }), true);
  if (estimate.gas > cap.gas) {
    return failed(
      settlementDoomed('transfer gas estimate is above its cap', { gas_estimate: estimate.gas.toString(), gas_cap: cap.gas.toString(), payer_kind: cap.kind }),
      true,
    );
  }
  return { to: 'check_allowance', note: { transfer_gas_estimate: estimate.gas.toString(), payer_kind: cap.kind, ...(withPermit ? { with_permit: true } : {}) } };
};

/**
 * Whether the transfer's estimate would tell nothing the other checks do not (issue 41, item 1: one chain
 * simulation per settlement fewer, the largest share of the chain node's work per settlement). Only all of:
 * - the atomic path: the fee and the transfer are one item of one transaction, and an item whose transfer
 *   fails undoes its fee, so no merchant ever pays for it (the batch's estimate runs before it is sent);
 * - a payer without code whose signature this worker recovers itself, offline, under the token's domain (its
 *   mechanism has an offline signature made under the token's domain, and a nonce space asked above; the
 *   row's verification is not trusted for it: a database writer can insert any row), so no code of the payer's
 *   runs (a contract wallet's check may burn gas or answer differently in a simulation: always estimated);
 * - a mechanism that moves the payer's money on its signature alone (no approval to read, no permit to send):
 *   what its transfer needs besides the signature is an unused nonce (asked above), the validity window
 *   (asked above) and the payer's balance, which check_allowance reads and reserves against before any fee;
 * - the failure accounting on (absent, check_allowance does not read the payer's balance).
 * What is left to fail it is the token's own refusal (a blacklisted or paused account): it costs the batch an
 * item's gas and the merchant nothing, and counts against the payer as a costly failure.
 */
async function estimateNotNeeded(ctx: StepContext, payment: SettlementPayment, withPermit: boolean): Promise<boolean> {
  const { mechanism, parsed } = payment;
  const { signature } = mechanism;
  if (withPermit || mechanism.approval || !mechanism.nonce || !signature || signature.ownDomainSeparator || !ctx.policy.accounting || pathOf(ctx) !== 'atomic') return false;
  if (!ctx.network.tokenDomainSeparator || (await ctx.chain.codeAt(ctx.settlement.payer))) return false;
  // the signature is checked here, by this worker, not taken from the row: a row a database writer inserted
  // (past verification, with any signature) must still be proven before anything of ours is spent on it
  const recovered = signature.recoverSigner(signature.signedDigest(parsed.payload, await ctx.network.tokenDomainSeparator()), parsed.signature);
  return recovered.ok && recovered.address.toLowerCase() === parsed.terms.payer.toLowerCase();
}

/**
 * A call only one address may send (upto's witness names the facilitator) is sent as the treasury: by the
 * executor's item on the atomic path, or from the treasury's key on the sequential path (check_allowance
 * refuses that path in a worker without it). Refused before any fee when the payment names another address
 * (the treasury changed since verify): the proxy would revert our call after the fee was taken.
 */
function senderRefusal(ctx: StepContext, call: DirectCall): StepResult | undefined {
  if (call.sender === undefined || call.sender === ctx.signers.treasury.toLowerCase()) return undefined;
  return failed(settlementDoomed('the payment may be executed only by another facilitator address than this service', { facilitator: call.sender, treasury: ctx.signers.treasury }), true);
}

/**
 * The cap of a transfer transaction (the payment's direct call, `directCallOf`): its execution's cap plus its
 * calldata (16 gas a non-zero byte, 4 a zero byte), so a contract wallet's long signature is counted as what
 * it costs, not taken from its execution.
 */
export async function transferGasCap(ctx: StepContext, call: Pick<DirectCall, 'data'>, withPermit = false): Promise<{ gas: bigint; kind: 'eoa' | 'contract' }> {
  const execution = await transferExecutionGasCap(ctx, withPermit);
  return { ...execution, gas: execution.gas + calldataGas(call.data) };
}

/**
 * The execution cap of the payer's kind: a contract wallet's transfer runs its ERC-1271 check too. Every
 * direct call takes the transfer caps, measured on the token's own transfer (EIP-3009's): Permit2's settle
 * through x402's exact proxy fits them (108k gas on the devnet from an EOA), until GasCaps has an entry per
 * GasKind; plus what the payment's mechanism says its call runs besides (`gas.extra`).
 */
export async function transferExecutionGasCap(ctx: StepContext, withPermit = false): Promise<{ gas: bigint; kind: 'eoa' | 'contract' }> {
  const contract = await ctx.chain.codeAt(ctx.settlement.payer);
  // e.g. a call that sends the payer's approval permit first runs the token's permit too
  const extra = paymentOf(ctx.settlement).mechanism.gas?.extra({ withPermit }) ?? 0n;
  return contract ? { gas: ctx.network.gasCaps.contractTransfer + extra, kind: 'contract' } : { gas: ctx.network.gasCaps.transfer + extra, kind: 'eoa' };
}
