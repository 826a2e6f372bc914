import { decodeRevertData } from '@facilitator/evm-chain';
import { AbiCoder, concat, dataSlice, Interface, type BytesLike } from 'ethers';
import { WALLET_DEPLOYMENT_PROBE_ARTIFACT } from './wallet-deployment-probe-artifact';

const probeInterface = new Interface(WALLET_DEPLOYMENT_PROBE_ARTIFACT.abi as never);

export interface WalletDeploymentProbeRequest {
  factory: string;
  factoryCalldata: string;
  /** the counterfactual wallet (authorization.from) the factory call must deploy */
  wallet: string;
  token: string;
  /** the token call that runs once the wallet exists (transferWithAuthorization) */
  transferCalldata: string;
}

/**
 * Creation code (with its constructor's arguments) of the probe: run by `eth_call` without a `to`, it
 * deploys the wallet and then runs the transfer in one simulated state, so a relayer pays for a deployment
 * only once both pass together. Every node answers such a call (no state overrides, no tracing).
 */
export function walletDeploymentProbeCode(request: WalletDeploymentProbeRequest): string {
  const args = AbiCoder.defaultAbiCoder().encode(
    ['address', 'bytes', 'address', 'address', 'bytes'],
    [request.factory, request.factoryCalldata, request.wallet, request.token, request.transferCalldata],
  );
  return concat([WALLET_DEPLOYMENT_PROBE_ARTIFACT.bytecode, args]);
}

/** The gas the probe measured for the deployment and for the transfer after it. */
export function walletDeploymentProbeResult(returned: BytesLike): { deployGas: bigint; transferGas: bigint } {
  const [deployGas, transferGas] = AbiCoder.defaultAbiCoder().decode(['uint256', 'uint256'], returned) as unknown as [bigint, bigint];
  return { deployGas, transferGas };
}

/** Which step of the probe failed, and why, from its revert data. */
export function walletDeploymentProbeFailure(revertData: string | undefined): { stage: 'deployment' | 'transfer' | 'unknown'; reason: string } {
  const data = revertData ?? '0x';
  if (data.length < 10) return { stage: 'unknown', reason: 'the simulation reverted without a reason' };
  const selector = dataSlice(data, 0, 4).toLowerCase();
  if (selector === probeInterface.getError('WalletNotDeployed')!.selector) return { stage: 'deployment', reason: 'the factory call did not deploy authorization.from' };
  for (const [name, stage] of [['DeploymentFailed', 'deployment'], ['TransferFailed', 'transfer']] as const) {
    if (selector !== probeInterface.getError(name)!.selector) continue;
    const inner = probeInterface.decodeErrorResult(name, data)[0] as string;
    return { stage, reason: decodeRevertData(inner) ?? (inner === '0x' ? 'reverted without a reason' : `revert data ${inner}`) };
  }
  return { stage: 'unknown', reason: decodeRevertData(data) ?? 'the simulation reverted' };
}
