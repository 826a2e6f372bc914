/**
 * Which path new settlements take on a network, asked, never set: the worker's check of the treasury's
 * delegation owns the answer (apps/worker's SettlementPaths reads it at start-up and every
 * EXECUTOR_RECHECK_MS); the machine reads it once per step into `StepContext.networkPath`. Nothing a step
 * or a batch holds can change it. A settlement takes it only where its own payment allows: check_allowance
 * keeps a payment the executor cannot run (not EIP-3009, see atomic/executor-item.ts) sequential.
 */
export interface SettlementPathPolicy {
  /**
   * `atomic` where the treasury's delegation to an executor with this worker's token, treasury and fee,
   * naming at least one of its relayers, is in place; `sequential` otherwise (and before the first check)
   */
  pathOf(chainId: number): 'atomic' | 'sequential';
}

/** Every network sequential: a worker without executor batches, and the default. */
export const SEQUENTIAL_EVERYWHERE: SettlementPathPolicy = { pathOf: () => 'sequential' };
