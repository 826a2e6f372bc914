import { parseErc6492Signature, type Erc6492Signature } from '@facilitator/evm-chain';
import { GasCapExceededError, TransactionWouldRevertError } from '@facilitator/evm-sending';
import { rawSignatureOf } from '../payment';
import { failed, settlementDoomed } from '../failures';
import type { Step, StepContext } from '../step';
import { fundedRelayer, waitForGas } from '../waiting';
import { preflight } from './preflight';
import { deploymentRefusal, reserveDeployment } from './wallet-deployment-plan';
import { isWait, staysInState, type StepAwait, type StepResult, type StepWait } from '../step-outcome';

/**
 * `deploying_wallet`: a relayer sends the payer's factory call (idempotent per settlement, like every
 * transaction), and once the wallet exists the ordinary pre-flight runs against it. Anyone else deploying
 * the wallet first is as good: only its code at authorization.from matters.
 */
export const deployWallet: Step = async (ctx) => {
  const { usdc } = ctx.network;
  const payer = ctx.settlement.payer;
  // a deployment of ours already sent is awaited to its confirmations before the wallet's code is trusted: the
  // code a run sees at the latest block (a run woken early, or after a crash) may still be reorged away
  let sent = (await ctx.chain.transactions.find(ctx.settlement.id, 'wallet_deploy'))?.id;
  if (!sent && !(await usdc.hasCode(payer))) {
    const wrapped = parseErc6492Signature(rawSignatureOf(ctx.settlement));
    if (!wrapped) throw new Error(`settlement ${ctx.settlement.id} is deploying a wallet without an ERC-6492 signature`);
    const sending = await sendDeployment(ctx, wrapped);
    if (typeof sending !== 'string') return sending;
    sent = sending;
  }
  if (sent) {
    const outcome = await ctx.chain.outcomes.within(sent, ctx.network.confirmations);
    if (outcome.status === 'pending') return { awaiting: outcome };
    if (!(await usdc.hasCode(payer))) {
      const reason = outcome.status === 'reverted' ? (outcome.reason ?? 'wallet deployment reverted') : 'the factory call did not deploy authorization.from';
      return failed(settlementDoomed(reason, { wallet_deploy_tx_hash: outcome.hash }), true);
    }
  }
  const next = await preflight(ctx);
  return staysInState(next) ? next : { ...next, note: { ...next.note, wallet_deployed: true } };
};

/** Sends the factory call (none of ours was signed yet), or the failure or wait that stops it. */
async function sendDeployment(ctx: StepContext, wrapped: Erc6492Signature): Promise<string | StepResult | StepWait | StepAwait> {
  // checked again right before paying: the wallet's balance or the merchant's allowance may have left meanwhile
  if (!(await ctx.chain.transactions.hasAny(ctx.settlement.id, 'wallet_deploy'))) {
    const refused = await deploymentRefusal(ctx, wrapped);
    if (refused && isWait(refused)) return refused;
    if (refused) return nothingSent(ctx, refused);
    // the pre-flight reserved one already (reserving again is a yes); a row a database writer put straight into
    // deploying_wallet did not: it takes one now, within the merchant's and the factory's limits (issue 40)
    const limited = await reserveDeployment(ctx, wrapped);
    if (limited) return nothingSent(ctx, limited);
  }
  const gas = await waitForGas(ctx);
  if (gas) return gas;
  const relayer = await fundedRelayer(ctx);
  if (typeof relayer !== 'string') return relayer;
  try {
    const tx = await ctx.chain.transactions.submit({
      settlementId: ctx.settlement.id,
      purpose: 'wallet_deploy',
      chainId: ctx.network.chainId,
      from: relayer,
      to: wrapped.factory,
      data: wrapped.factoryCalldata,
      gasCap: ctx.network.gasCaps.walletDeploy,
    });
    return tx.id;
  } catch (err) {
    // the wallet appeared meanwhile (deployed by someone else): the factory call now reverts, and that is fine
    if (err instanceof TransactionWouldRevertError && (await ctx.network.usdc.hasCode(ctx.settlement.payer))) return preflight(ctx);
    if (err instanceof TransactionWouldRevertError) return nothingSent(ctx, failed(settlementDoomed(err.reason, { simulation: 'wallet deployment' }), true));
    if (err instanceof GasCapExceededError) return nothingSent(ctx, failed(settlementDoomed(err.message, { payer_kind: 'erc6492' }), true));
    throw err;
  }
}

/** The deployment was refused before anything was sent: its reservation goes back (only deployments count). */
async function nothingSent(ctx: StepContext, result: StepResult): Promise<StepResult> {
  await ctx.policy.walletDeployments?.release(ctx.settlement.id);
  return result;
}
