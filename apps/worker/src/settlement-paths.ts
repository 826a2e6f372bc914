import type { WorkerProcessConfig } from '@facilitator/config';
import type { Logger } from '@facilitator/logging';
import type { SettlementNetwork, SettlementPathPolicy } from '@facilitator/settlement';
import { executorTargets } from '@facilitator/payment-mechanisms';
import { executorStatus, type ExecutorStatus } from '@facilitator/evm-executor';
import type { JsonRpcProvider } from 'ethers';

/**
 * Decides, per network, which path new settlements take: atomic only when SETTLEMENT_MODE=atomic and the
 * treasury's delegation to the settlement executor with this configuration is in place; otherwise
 * sequential, with a warning saying why. Checked at start-up (settlements wait for the first check) and
 * again every EXECUTOR_RECHECK_MS. The answer lives here and is only read by others (`pathOf`): no step or
 * batch holds an object this timer rewrites.
 */
export class SettlementPaths implements SettlementPathPolicy {
  private timer?: NodeJS.Timeout;
  /** per chain, the path the last check found; absent until the first check ends */
  private readonly modes = new Map<number, 'atomic' | 'sequential'>();
  readonly firstCheck: Promise<void>;
  /** per chain, this worker's relayers that the executor names: the only ones that may send its batches */
  private readonly executorRelayers = new Map<number, readonly string[]>();

  constructor(
    private readonly config: WorkerProcessConfig,
    /** the relayers' lowercase addresses (the executor must name at least one of them) and whether the treasury's key is here */
    private readonly keys: { relayers: readonly string[]; treasurySigns: boolean },
    private readonly networks: ReadonlyMap<number, SettlementNetwork>,
    private readonly providers: ReadonlyMap<number, JsonRpcProvider>,
    private readonly logger: Logger,
  ) {
    this.firstCheck = this.checkAll();
    if (config.worker.settlementMode === 'atomic') this.timer = setInterval(() => void this.checkAll(), config.worker.executorRecheckMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * The relayers that send this chain's atomic batches: this worker's relayers that the executor names.
   * Between two steps of a key rotation the executor may name a key this worker does not hold (added to
   * the executor first) or this worker may hold a key the executor no longer names (retired from the
   * executor first): a batch from the latter would revert, so only keys both name send batches.
   */
  pathOf(chainId: number): 'atomic' | 'sequential' {
    return this.modes.get(chainId) ?? 'sequential';
  }

  batchRelayers(chainId: number): readonly string[] {
    return this.executorRelayers.get(chainId) ?? this.keys.relayers;
  }

  private async checkAll(): Promise<void> {
    await Promise.all([...this.networks.values()].map((network) => this.check(network)));
  }

  private async check(network: SettlementNetwork): Promise<void> {
    const previous = this.modes.get(network.chainId);
    if (this.config.worker.settlementMode === 'sequential') {
      this.modes.set(network.chainId, 'sequential');
      if (previous === undefined) this.logger.info('settlements are sequential (SETTLEMENT_MODE=sequential): fee and transfer in two transactions', { network: network.caip2 });
      return;
    }
    let status: ExecutorStatus | { state: 'unknown'; why: string };
    try {
      status = await executorStatus(this.providers.get(network.chainId)!, {
        chainId: network.chainId,
        token: network.usdc.tokenAddress,
        targets: executorTargets({ chainId: network.chainId, tokenAddress: network.usdc.tokenAddress.toLowerCase() }),
        treasury: this.config.treasuryAddress,
        fee: this.config.feeAmount,
        relayers: this.keys.relayers,
      }, 'some');
    } catch (error) {
      status = { state: 'unknown', why: `the delegation could not be read: ${(error as Error).message}` };
    }
    // an unreadable delegation keeps the path already chosen; at start-up it means sequential until the next check
    if (status.state === 'unknown' && previous !== undefined) return;
    if (status.state === 'ready') this.useRelayers(network, status.relayers);
    const mode = status.state === 'ready' ? 'atomic' : 'sequential';
    this.modes.set(network.chainId, mode);
    if (mode === previous) return;
    if (status.state === 'ready') {
      this.logger.info('settlements are atomic: fee and transfer in one transaction of the settlement executor', { network: network.caip2, executor: status.executor });
    } else if (!this.keys.treasurySigns) {
      this.logger.warn('the atomic settlement path is not set up on this network, and this worker holds no treasury key for the sequential path: settlements wait for it (status `waiting.reason: atomic_path_not_ready`); run `npm run cli -- executor setup`', {
        network: network.caip2,
        why: status.why,
      });
    } else {
      this.logger.warn('the atomic settlement path is not set up on this network: settling sequentially (two transactions); run `npm run cli -- executor setup`', {
        network: network.caip2,
        why: status.why,
      });
    }
  }

  private useRelayers(network: SettlementNetwork, named: readonly string[]): void {
    const executor = named.map((a) => a.toLowerCase());
    const both = this.keys.relayers.filter((a) => executor.includes(a));
    const before = this.executorRelayers.get(network.chainId);
    this.executorRelayers.set(network.chainId, both);
    if (before !== undefined && before.join() === both.join()) return;
    const notHeld = executor.filter((a) => !this.keys.relayers.includes(a));
    const notNamed = this.keys.relayers.filter((a) => !executor.includes(a));
    const fields = { network: network.caip2, sendingBatches: both, ...(notHeld.length ? { executorAlsoNames: notHeld } : {}), ...(notNamed.length ? { notNamedByExecutor: notNamed } : {}) };
    if (notHeld.length === 0 && notNamed.length === 0) this.logger.info('atomic batches are sent by every relayer key of this worker', fields);
    // a rotation in progress, or a configuration that drifted: either way nothing stops, but an operator should know
    else this.logger.warn('the executor and this worker name different relayer keys: batches are sent only by the keys both name (finish the rotation: README, "Rotating relayer keys")', fields);
  }
}
