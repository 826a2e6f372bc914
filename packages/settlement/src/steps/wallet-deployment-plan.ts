import { calldataGas, decodeImplementation, IMPLEMENTATION_VIEW, implementationOfFactoryCall } from '@facilitator/evm-executor';
import { UntrustedCallTimeoutError, type Erc6492Signature, type SimulationResult } from '@facilitator/evm-chain';
import { directCallOf, paymentOf } from '../payment';
import { failed, settlementDoomed } from '../failures';
import type { StepContext } from '../step';
import type { WalletDeploymentGuard } from '../wallet-deployment-guard';
import { noFundedRelayer } from '../waiting';
import { refusalBeforeWalletDeployment } from './check-allowance';
import type { StepResult, StepWait } from '../step-outcome';

// Whether an ERC-6492 payer's wallet may be deployed at our expense, decided by the pre-flight before any fee;
// the deploying_wallet step (deploy-wallet.ts) sends what was planned here.

/**
 * Before any fee, for an ERC-6492 payer whose wallet does not exist yet. Our relayers pay for the
 * deployment (250-300k gas), so a stranger's fresh salt must not buy one: the deployment is planned only
 * when the factory is allow-listed, the wallet it would deploy is an allow-listed implementation, the
 * counterfactual wallet holds the payment, the merchant's allowance and balance cover the fee, deploying
 * the wallet and then transferring from it pass together in one simulation, each within its gas cap, and
 * the merchant and the factory are within their deployment limits. Otherwise the settlement fails, nothing sent.
 */
export async function planWalletDeployment(ctx: StepContext, wrapped: Erc6492Signature): Promise<StepResult | StepWait> {
  const refused = await deploymentRefusal(ctx, wrapped);
  if (refused) return refused;
  const cap = ctx.network.gasCaps.walletDeploy;
  // as the deployment will be sent: within its cap, at the market's gas price (the factory's code decides)
  const { maxFeePerGasCap } = await ctx.chain.transactions.networkFee(ctx.network.chainId);
  const estimate: SimulationResult = await ctx.network.usdc.estimate(ctx.signers.relayers[0], wrapped.factoryCalldata, wrapped.factory, { gasLimit: cap, maxFeePerGasCap }).catch(async (err: unknown) => {
    // the factory's code did not finish in time: the stranger's doing, counted like a failed probe, never retried
    if (!(err instanceof UntrustedCallTimeoutError)) throw err;
    await ctx.policy.walletDeployments!.recordFailedProbe(deploymentRequest(ctx, wrapped));
    return { revert: 'the wallet deployment estimate did not finish in time' };
  });
  if ('revert' in estimate && estimate.outOfGas !== undefined) {
    return failed(
      settlementDoomed('wallet deployment gas estimate is above its cap', { gas_estimate: `above ${estimate.outOfGas}`, gas_cap: cap.toString(), payer_kind: 'erc6492' }),
      true,
    );
  }
  if ('revert' in estimate) return failed(settlementDoomed(estimate.revert, { simulation: 'wallet deployment', factory: wrapped.factory, payer_kind: 'erc6492' }), true);
  if (estimate.gas > cap) {
    return failed(
      settlementDoomed('wallet deployment gas estimate is above its cap', { gas_estimate: estimate.gas.toString(), gas_cap: cap.toString(), payer_kind: 'erc6492' }),
      true,
    );
  }
  // last: a reservation counts against the limits, so only a deployment that passed everything takes one
  const limited = await reserveDeployment(ctx, wrapped);
  if (limited) return limited;
  return { to: 'deploying_wallet', note: { factory: wrapped.factory, deploy_gas_estimate: estimate.gas.toString(), payer_kind: 'erc6492' } };
}

/**
 * Why this wallet must not be deployed at our expense (a failed result), or undefined when it may; a wait
 * when no sender has the ETH to simulate it at the market's gas price.
 */
export async function deploymentRefusal(ctx: StepContext, wrapped: Erc6492Signature): Promise<StepResult | StepWait | undefined> {
  const refuse = (reason: string, extra: Record<string, unknown> = {}) =>
    failed(settlementDoomed(reason, { factory: wrapped.factory, payer_kind: 'erc6492', ...extra }), true);
  const { usdc } = ctx.network;
  if (!ctx.network.walletFactories.includes(wrapped.factory)) return refuse('the ERC-6492 factory is not on the allowlist');
  const admission = await refusalBeforeWalletDeployment(ctx);
  if (admission) return admission;
  const guard = ctx.policy.walletDeployments;
  if (!guard) return refuse('this worker has no wallet-deployment checks, so it deploys no wallets');
  const implementation = await deployedImplementation(ctx, guard, wrapped);
  if ('unknown' in implementation) return refuse(implementation.unknown);
  if (!ctx.network.walletImplementations.includes(implementation.address)) {
    return refuse('the wallet implementation the factory would deploy is not on the allowlist', { implementation: implementation.address });
  }
  const { terms } = paymentOf(ctx.settlement).parsed;
  const amount = BigInt(ctx.settlement.amount);
  const merchant = ctx.settlement.merchant;
  const [payerBalance, allowance, merchantBalance] = await Promise.all([
    usdc.balanceOf(terms.payer),
    usdc.allowance(merchant, ctx.signers.treasury),
    usdc.balanceOf(merchant),
  ]);
  if (payerBalance < amount) {
    return refuse('the counterfactual wallet does not hold the payment', { balance: payerBalance.toString(), value: amount.toString() });
  }
  if (allowance < ctx.policy.feeAmount) {
    return refuse("the merchant's allowance to the treasury does not cover the fee", { required: ctx.policy.feeAmount.toString(), available: allowance.toString() });
  }
  if (merchantBalance < ctx.policy.feeAmount) {
    return refuse("the merchant's balance does not cover the fee", { required: ctx.policy.feeAmount.toString(), available: merchantBalance.toString() });
  }
  const simulation = await probeDeployment(ctx, guard, wrapped);
  if ('refused' in simulation) return simulation.refused;
  const { deployGas, transferGas } = simulation;
  const caps = ctx.network.gasCaps;
  if (deployGas > caps.walletDeploy) {
    return refuse('wallet deployment gas estimate is above its cap', { gas_estimate: deployGas.toString(), gas_cap: caps.walletDeploy.toString() });
  }
  if (transferGas > caps.contractTransfer) {
    return refuse('transfer gas estimate is above its cap', { gas_estimate: transferGas.toString(), gas_cap: caps.contractTransfer.toString(), stage: 'transfer' });
  }
  return undefined;
}

/**
 * Gas of the probe's own work around the two calls it makes: a creation's intrinsic 53,000, its 839 bytes of
 * code as calldata (at most 13,424), the ABI words around its arguments, the calls' set-up and its answer.
 */
const PROBE_OWN_GAS = 120_000n;

/**
 * The deployment and the payment's direct call after it, in one simulated state (a deployless eth_call of the
 * probe), run as the real transactions: within their caps, at the market's gas price, as the sender that will
 * send them (the one the payment names, upto's facilitator, else a relayer with the ETH for the gas). The probe
 * runs the stranger's factory and wallet: each wallet and merchant has a budget of failed probes, and a failure
 * is counted against it (never against the factory's deployments, which honest first-time payers share).
 */
async function probeDeployment(
  ctx: StepContext,
  guard: WalletDeploymentGuard,
  wrapped: Erc6492Signature,
): Promise<{ deployGas: bigint; transferGas: bigint } | { refused: StepResult | StepWait }> {
  const refuse = (reason: string, extra: Record<string, unknown>) =>
    ({ refused: failed(settlementDoomed(reason, { factory: wrapped.factory, payer_kind: 'erc6492', ...extra }), true) });
  const request = deploymentRequest(ctx, wrapped);
  const allowance = await guard.probeAllowance(request);
  if (!allowance.allowed) {
    // the merchant's budget is one: its deployments and its payments' failed probes together
    const reason = allowance.limit === 'merchant' ? 'wallet deployments limit reached for this merchant' : 'wallet deployment probes limit reached for this wallet';
    return refuse(reason, { limit: allowance.limit, probes: allowance.count, max: allowance.max });
  }
  const { usdc, gasCaps } = ctx.network;
  const call = directCallOf(ctx.settlement, usdc);
  const probe = {
    factory: wrapped.factory,
    factoryCalldata: wrapped.factoryCalldata,
    wallet: paymentOf(ctx.settlement).parsed.terms.payer,
    token: call.to,
    transferCalldata: call.data,
  };
  // the deployment and the transfer within their caps, their calldata (carried by the probe's) and the probe's own
  const gasLimit = gasCaps.walletDeploy + gasCaps.contractTransfer + calldataGas(probe.factoryCalldata) + calldataGas(probe.transferCalldata) + PROBE_OWN_GAS;
  const { maxFeePerGasCap } = await ctx.chain.transactions.networkFee(ctx.network.chainId);
  for (const sender of call.sender ? [call.sender] : ctx.signers.relayers) {
    const simulation = await guard.simulateDeployment(ctx.network.chainId, sender, probe, { gasLimit, maxFeePerGasCap });
    if ('insufficientFunds' in simulation) continue;
    if ('reason' in simulation) {
      await guard.recordFailedProbe(request);
      return refuse(simulation.reason, { simulation: 'wallet deployment and transfer', stage: simulation.stage });
    }
    return simulation;
  }
  return { refused: noFundedRelayer(ctx) };
}

export function deploymentRequest(ctx: StepContext, wrapped: Erc6492Signature) {
  return {
    settlementId: ctx.settlement.id,
    chainId: ctx.network.chainId,
    merchant: ctx.settlement.merchant.toLowerCase(),
    factory: wrapped.factory,
    wallet: ctx.settlement.payer.toLowerCase(),
  };
}

async function deployedImplementation(ctx: StepContext, guard: WalletDeploymentGuard, wrapped: Erc6492Signature): Promise<{ address: string } | { unknown: string }> {
  const call = implementationOfFactoryCall(wrapped.factoryCalldata);
  if ('unknown' in call) return call;
  if ('implementation' in call) return { address: call.implementation };
  const address = decodeImplementation(await guard.call(ctx.network.chainId, wrapped.factory, IMPLEMENTATION_VIEW).catch(() => '0x'));
  return address ? { address } : { unknown: 'the factory does not say which implementation it deploys' };
}

/** Takes one of the merchant's and the factory's deployments of the window, or says which limit is reached. */
export async function reserveDeployment(ctx: StepContext, wrapped: Erc6492Signature): Promise<StepResult | undefined> {
  const reservation = await ctx.policy.walletDeployments!.reserve(deploymentRequest(ctx, wrapped));
  if (reservation.reserved) return undefined;
  return failed(
    settlementDoomed(`wallet deployments limit reached for this ${reservation.limit}`, {
      factory: wrapped.factory,
      payer_kind: 'erc6492',
      limit: reservation.limit,
      deployments: reservation.count,
      max: reservation.max,
    }),
    true,
  );
}
