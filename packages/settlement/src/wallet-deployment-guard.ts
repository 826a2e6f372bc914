import type { WalletDeploymentLimits, WalletDeploymentRepository, WalletDeploymentRequest, WalletDeploymentReservation } from '@facilitator/db';
import {
  walletDeploymentProbeCode,
  walletDeploymentProbeFailure,
  walletDeploymentProbeResult,
  type WalletDeploymentProbeRequest,
} from '@facilitator/settlement-contract';

/** What the deploy-then-transfer simulation found: the gas of each step, or which step failed and why. */
export type DeploymentSimulation = { deployGas: bigint; transferGas: bigint } | { stage: 'deployment' | 'transfer' | 'unknown'; reason: string };

/**
 * What the steps need before a relayer pays for an ERC-6492 payer's wallet: the deployment and the transfer
 * after it simulated together, a view call (a factory's implementation), and a reservation within the
 * per-merchant and per-factory deployment limits.
 */
export interface WalletDeploymentGuard {
  /** deploys the wallet, then runs the transfer from it, in one simulated state (as `from`, against the pending block) */
  simulateDeployment(chainId: number, from: string, request: WalletDeploymentProbeRequest): Promise<DeploymentSimulation>;
  /** eth_call of a view */
  call(chainId: number, to: string, data: string): Promise<string>;
  reserve(request: WalletDeploymentRequest): Promise<WalletDeploymentReservation>;
  /** gives back a settlement's reservation when its deployment was never sent: only deployments count */
  release(settlementId: string): Promise<void>;
}

/** The one thing the guard needs of a network's provider (ethers' JsonRpcProvider has it). */
interface JsonRpcSender {
  send(method: string, params: unknown[]): Promise<unknown>;
}

interface ErrorWithData {
  code?: unknown;
  data?: unknown;
  info?: { error?: { data?: unknown } };
  error?: { data?: unknown };
}

/** The revert data of a failed eth_call, wherever the node and ethers put it; undefined when it is no revert. */
function revertDataOf(error: unknown): { data: string | undefined } | undefined {
  const e = (error ?? {}) as ErrorWithData;
  for (const candidate of [e.data, e.info?.error?.data, e.error?.data]) {
    if (typeof candidate === 'string' && /^0x[0-9a-fA-F]*$/.test(candidate)) return { data: candidate };
  }
  const message = String((error as Error)?.message ?? '');
  return e.code === 'CALL_EXCEPTION' || /revert/i.test(message) ? { data: undefined } : undefined;
}

/** The worker's guard: the networks' providers and the wallet_deployments table. */
export class RpcWalletDeploymentGuard implements WalletDeploymentGuard {
  constructor(
    private readonly providers: ReadonlyMap<number, JsonRpcSender>,
    private readonly deployments: Pick<WalletDeploymentRepository, 'reserve' | 'release'>,
    private readonly limits: WalletDeploymentLimits,
  ) {}

  /**
   * A deployless `eth_call` (no `to`) of the probe's creation code: every node answers it (no state
   * overrides, no tracing, no bundle API), and nothing of it is kept.
   */
  async simulateDeployment(chainId: number, from: string, request: WalletDeploymentProbeRequest): Promise<DeploymentSimulation> {
    try {
      const returned = (await this.provider(chainId).send('eth_call', [{ from, data: walletDeploymentProbeCode(request) }, 'pending'])) as string;
      return walletDeploymentProbeResult(returned);
    } catch (error) {
      const revert = revertDataOf(error);
      if (!revert) throw error;
      return walletDeploymentProbeFailure(revert.data);
    }
  }

  async call(chainId: number, to: string, data: string): Promise<string> {
    return (await this.provider(chainId).send('eth_call', [{ to, data }, 'latest'])) as string;
  }

  reserve(request: WalletDeploymentRequest): Promise<WalletDeploymentReservation> {
    return this.deployments.reserve(request, this.limits);
  }

  release(settlementId: string): Promise<void> {
    return this.deployments.release(settlementId);
  }

  private provider(chainId: number): JsonRpcSender {
    const provider = this.providers.get(chainId);
    if (!provider) throw new Error(`no provider for chain ${chainId}`);
    return provider;
  }
}
