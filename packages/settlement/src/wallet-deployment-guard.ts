import { classifyNodeError, isOutOfGasAnswer, UntrustedCallTimeoutError, type SimulationOptions } from '@facilitator/evm-chain';
import type {
  WalletDeploymentLimits,
  WalletDeploymentRepository,
  WalletDeploymentRequest,
  WalletDeploymentReservation,
  WalletProbeAllowance,
} from '@facilitator/db';
import {
  walletDeploymentProbeCode,
  walletDeploymentProbeFailure,
  walletDeploymentProbeResult,
  type WalletDeploymentProbeRequest,
} from '@facilitator/evm-executor';

/**
 * What the deploy-then-transfer simulation found: the gas of each step, which step failed and why, or that
 * the sender cannot pay for the gas at the market's price (the caller asks another sender).
 */
export type DeploymentSimulation =
  | { deployGas: bigint; transferGas: bigint }
  | { stage: 'deployment' | 'transfer' | 'unknown'; reason: string }
  | { insufficientFunds: true };

/** The real transaction the probe runs as: its gas limit (our caps) and the fee market's price (capped). */
export type ProbeTransaction = Required<SimulationOptions>;

/**
 * What the steps need before a relayer pays for an ERC-6492 payer's wallet: the deployment and the transfer
 * after it simulated together, a view call (a factory's implementation), a budget of probes per wallet and
 * merchant, and a reservation within the per-merchant and per-factory deployment limits.
 */
export interface WalletDeploymentGuard {
  /**
   * deploys the wallet, then runs the transfer from it, in one simulated state (as `from`, against the pending
   * block), as the real transactions would run: within their gas and at the market's gas price
   */
  simulateDeployment(chainId: number, from: string, request: WalletDeploymentProbeRequest, tx: ProbeTransaction): Promise<DeploymentSimulation>;
  /** eth_call of a factory's view (the factory's code: run as a stranger's) */
  call(chainId: number, to: string, data: string): Promise<string>;
  /** whether the wallet's and the merchant's probe budgets allow another probe */
  probeAllowance(request: WalletDeploymentRequest): Promise<WalletProbeAllowance>;
  /** counts a failed probe against the wallet and the merchant (never the factory) */
  recordFailedProbe(request: WalletDeploymentRequest): Promise<void>;
  reserve(request: WalletDeploymentRequest): Promise<WalletDeploymentReservation>;
  /** gives back a settlement's reservation when its deployment was never sent: only deployments count */
  release(settlementId: string): Promise<void>;
}

/** What the guard needs of a network's token client (UsdcClient has it): a stranger's code run alone. */
export interface UntrustedCalls {
  callAsTransaction(call: { from: string; to?: string; data: string }, options?: SimulationOptions, block?: string): Promise<string>;
}

/** A view needs no more gas than this: a factory's `implementation()` that burns more is refused. */
const VIEW_GAS_LIMIT = 100_000n;

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

/** The worker's guard: the networks' token clients (for their untrusted calls) and the wallet_deployments table. */
export class RpcWalletDeploymentGuard implements WalletDeploymentGuard {
  constructor(
    private readonly networks: ReadonlyMap<number, UntrustedCalls>,
    private readonly deployments: Pick<WalletDeploymentRepository, 'reserve' | 'release' | 'probeAllowance' | 'recordFailedProbe'>,
    private readonly limits: WalletDeploymentLimits,
  ) {}

  /**
   * A deployless `eth_call` (no `to`) of the probe's creation code: every node answers it (no state
   * overrides, no tracing, no bundle API), and nothing of it is kept. It runs the payer's factory and wallet,
   * so it goes alone and judges no endpoint, within `tx.gasLimit` and at the market's gas price.
   */
  async simulateDeployment(chainId: number, from: string, request: WalletDeploymentProbeRequest, tx: ProbeTransaction): Promise<DeploymentSimulation> {
    try {
      const returned = await this.network(chainId).callAsTransaction({ from, data: walletDeploymentProbeCode(request) }, tx);
      return walletDeploymentProbeResult(returned);
    } catch (error) {
      if (error instanceof UntrustedCallTimeoutError) return { stage: 'unknown', reason: 'the wallet deployment simulation did not finish in time' };
      if (isOutOfGasAnswer(error)) return { stage: 'unknown', reason: `the wallet deployment simulation ran out of its gas limit (${tx.gasLimit})` };
      if (classifyNodeError(error).category === 'insufficient_funds') return { insufficientFunds: true };
      const revert = revertDataOf(error);
      if (!revert) throw error;
      return walletDeploymentProbeFailure(revert.data);
    }
  }

  async call(chainId: number, to: string, data: string): Promise<string> {
    // no `from` of ours is needed to read a view; no fee fields either (nothing of it is paid for)
    return this.network(chainId).callAsTransaction({ from: '0x0000000000000000000000000000000000000000', to, data }, { gasLimit: VIEW_GAS_LIMIT }, 'latest');
  }

  probeAllowance(request: WalletDeploymentRequest): Promise<WalletProbeAllowance> {
    return this.deployments.probeAllowance(request, this.limits);
  }

  recordFailedProbe(request: WalletDeploymentRequest): Promise<void> {
    return this.deployments.recordFailedProbe(request);
  }

  reserve(request: WalletDeploymentRequest): Promise<WalletDeploymentReservation> {
    return this.deployments.reserve(request, this.limits);
  }

  release(settlementId: string): Promise<void> {
    return this.deployments.release(settlementId);
  }

  private network(chainId: number): UntrustedCalls {
    const network = this.networks.get(chainId);
    if (!network) throw new Error(`no provider for chain ${chainId}`);
    return network;
  }
}
