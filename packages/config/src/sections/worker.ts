import { ALL_QUEUES, isQueueName, type QueueName } from '@facilitator/queue';
import { ConfigError } from '../config-error';
import type { EnvReader } from '../parsers';

const SETTLEMENT_MODES = ['atomic', 'sequential'] as const;

/** How a worker process runs its queues and advances settlements. */
export interface WorkerConfig {
  /** which queues this worker process serves (WORKER_QUEUES); default both */
  queues: QueueName[];
  settlementConcurrency: number;
  webhookConcurrency: number;
  /** WEBHOOK_RECEIVER_CONCURRENCY: deliveries in flight to one receiver (origin host:port) per worker process */
  webhookReceiverConcurrency: number;
  /** WEBHOOK_BREAKER_FAILURES: consecutive failed attempts to one receiver that open its circuit breaker */
  webhookBreakerFailures: number;
  /** WEBHOOK_BREAKER_COOLDOWN_MS: how long an open breaker holds deliveries before a probe (doubling per failed probe) */
  webhookBreakerCooldownMs: number;
  /** a job whose worker stops renewing its lock for this long is taken back (e.g. after SIGKILL) */
  lockDurationMs: number;
  /** how often stalled jobs are looked for */
  stalledIntervalMs: number;
  /** how long SIGTERM waits for in-flight jobs before exiting */
  shutdownTimeoutMs: number;
  /** 0 disables the metrics listener */
  metricsPort: number;
  /** how often the sweeper looks for records whose job was lost */
  sweepIntervalMs: number;
  /** a non-final record untouched this long is checked for a lost job */
  sweepStaleAfterMs: number;
  /** how often settled transactions are checked for reorgs until final (FINALITY_POLL_MS) */
  finalityPollMs: number;
  /** attempts of a settlement job whose step keeps failing transiently, before it is parked for an operator */
  settlementAttempts: number;
  /**
   * SETTLEMENT_IN_SLOT_WAIT_MS: how long a settlement job waits in its slot for a sent transaction's outcome
   * before it gives the slot up until the outcome is known (no job holds a slot while it waits for a block)
   */
  settlementInSlotWaitMs: number;
  /**
   * SETTLEMENT_CHAIN_RECHECK_MS: the longest a job that gave up its slot stays delayed; the fallback when the
   * process waiting for its transaction dies (it is otherwise run again as soon as the outcome is known)
   */
  settlementChainRecheckMs: number;
  /**
   * SETTLEMENT_MODE: `atomic` (default) collects the fee and executes the transfer in one transaction of the
   * settlement executor where the treasury's delegation is in place; `sequential` always sends two
   */
  settlementMode: (typeof SETTLEMENT_MODES)[number];
  /**
   * BATCH_WINDOW_MS: how long the first ready settlement waits for others to share its transaction (0: none;
   * under load, settlements that become ready while one batch is being sent share the next anyway)
   */
  batchWindowMs: number;
  /**
   * EXECUTOR_RECHECK_MS: how often the treasury's delegation is read again, so that an `executor setup` done
   * later (or a delegation removed) takes effect without a restart
   */
  executorRecheckMs: number;
}

export function readWorker(reader: EnvReader): WorkerConfig {
  const queues = reader.list('WORKER_QUEUES');
  const unknown = queues.find((q) => !isQueueName(q));
  if (unknown !== undefined) throw new ConfigError('WORKER_QUEUES', `names an unknown queue "${unknown}" (known: ${ALL_QUEUES.join(', ')})`);
  const webhookConcurrency = reader.integer('WEBHOOK_CONCURRENCY', 20, 1, 1000);
  return {
    queues: queues.length > 0 ? queues.filter(isQueueName) : [...ALL_QUEUES],
    settlementConcurrency: reader.integer('SETTLEMENT_CONCURRENCY', 200, 1, 1000),
    webhookConcurrency,
    // at most the delivery slots: a cap equal to them is no cap, so it is allowed only when there is one slot
    webhookReceiverConcurrency: reader.integer('WEBHOOK_RECEIVER_CONCURRENCY', Math.min(4, webhookConcurrency), 1, webhookConcurrency),
    webhookBreakerFailures: reader.integer('WEBHOOK_BREAKER_FAILURES', 5, 1, 1000),
    webhookBreakerCooldownMs: reader.integer('WEBHOOK_BREAKER_COOLDOWN_MS', 30_000, 100, 3_600_000),
    lockDurationMs: reader.integer('WORKER_LOCK_DURATION_MS', 15_000, 1_000, 600_000),
    stalledIntervalMs: reader.integer('WORKER_STALLED_INTERVAL_MS', 5_000, 500, 600_000),
    shutdownTimeoutMs: reader.integer('WORKER_SHUTDOWN_TIMEOUT_MS', 25_000, 0, 600_000),
    metricsPort: reader.integer('WORKER_METRICS_PORT', 0, 0, 65535),
    sweepIntervalMs: reader.integer('SWEEP_INTERVAL_MS', 30_000, 100, 3_600_000),
    sweepStaleAfterMs: reader.integer('SWEEP_STALE_AFTER_MS', 60_000, 100, 86_400_000),
    finalityPollMs: reader.integer('FINALITY_POLL_MS', 2_000, 100, 600_000),
    settlementAttempts: reader.integer('SETTLEMENT_MAX_ATTEMPTS', 12, 1, 1000),
    settlementInSlotWaitMs: reader.integer('SETTLEMENT_IN_SLOT_WAIT_MS', 250, 0, 60_000),
    settlementChainRecheckMs: reader.integer('SETTLEMENT_CHAIN_RECHECK_MS', 30_000, 100, 600_000),
    settlementMode: reader.oneOf('SETTLEMENT_MODE', SETTLEMENT_MODES, 'atomic'),
    batchWindowMs: reader.integer('BATCH_WINDOW_MS', 0, 0, 10_000),
    executorRecheckMs: reader.integer('EXECUTOR_RECHECK_MS', 60_000, 1_000, 3_600_000),
  };
}
