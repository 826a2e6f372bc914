import { GasCapExceededError, parseErc6492Signature, TransactionWouldRevertError, type Erc6492Signature } from '@facilitator/chain';
import { rawSignatureOf } from '../authorization';
import { failed, settlementDoomed } from '../failures';
import type { Step, StepContext, StepResult } from '../step';
import { fundedRelayer, isWait, waitForGas, type StepWait } from '../waiting';
import { preflight } from './preflight';

/**
 * Before any fee, for an ERC-6492 payer whose wallet does not exist yet: the factory must be allowlisted
 * and its call must pass within the wallet-deployment gas cap. Otherwise the settlement fails, nothing sent.
 */
export async function planWalletDeployment(ctx: StepContext, wrapped: Erc6492Signature): Promise<StepResult> {
  if (!ctx.network.walletFactories.includes(wrapped.factory)) {
    return failed(settlementDoomed('the ERC-6492 factory is not on the allowlist', { factory: wrapped.factory }), true);
  }
  const estimate = await ctx.network.usdc.estimate(ctx.relayers[0], wrapped.factoryCalldata, wrapped.factory);
  if ('revert' in estimate) return failed(settlementDoomed(estimate.revert, { simulation: 'wallet deployment', factory: wrapped.factory }), true);
  const cap = ctx.network.gasCaps.walletDeploy;
  if (estimate.gas > cap) {
    return failed(
      settlementDoomed('wallet deployment gas estimate is above its cap', { gas_estimate: estimate.gas.toString(), gas_cap: cap.toString(), payer_kind: 'erc6492' }),
      true,
    );
  }
  return { to: 'deploying_wallet', note: { factory: wrapped.factory, deploy_gas_estimate: estimate.gas.toString(), payer_kind: 'erc6492' } };
}

/**
 * `deploying_wallet`: a relayer sends the payer's factory call (idempotent per settlement, like every
 * transaction), and once the wallet exists the ordinary pre-flight runs against it. Anyone else deploying
 * the wallet first is as good: only its code at authorization.from matters.
 */
export const deployWallet: Step = async (ctx) => {
  const { usdc } = ctx.network;
  const payer = ctx.settlement.payer;
  if (!(await usdc.hasCode(payer))) {
    const wrapped = parseErc6492Signature(rawSignatureOf(ctx.settlement));
    if (!wrapped) throw new Error(`settlement ${ctx.settlement.id} is deploying a wallet without an ERC-6492 signature`);
    const sent = await sendDeployment(ctx, wrapped);
    if (typeof sent !== 'string') return sent;
    const outcome = await ctx.transactions.waitForOutcome(sent, ctx.network.confirmations);
    if (!(await usdc.hasCode(payer))) {
      const reason = outcome.status === 'reverted' ? (outcome.reason ?? 'wallet deployment reverted') : 'the factory call did not deploy authorization.from';
      return failed(settlementDoomed(reason, { wallet_deploy_tx_hash: outcome.hash }), true);
    }
  }
  const next = await preflight(ctx);
  return isWait(next) ? next : { ...next, note: { ...next.note, wallet_deployed: true } };
};

async function sendDeployment(ctx: StepContext, wrapped: Erc6492Signature): Promise<string | StepResult | StepWait> {
  const existing = await ctx.transactions.find(ctx.settlement.id, 'wallet_deploy');
  if (existing) return existing.id;
  const gas = await waitForGas(ctx);
  if (gas) return gas;
  const relayer = await fundedRelayer(ctx);
  if (typeof relayer !== 'string') return relayer;
  try {
    const tx = await ctx.transactions.submit({
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
    if (err instanceof TransactionWouldRevertError) return failed(settlementDoomed(err.reason, { simulation: 'wallet deployment' }), true);
    if (err instanceof GasCapExceededError) return failed(settlementDoomed(err.message, { payer_kind: 'erc6492' }), true);
    throw err;
  }
}
