import type { TransactionOutcome, TransactionProvider } from '@facilitator/evm-sending';

/**
 * A transaction whose outcome is not known yet. `known` resolves (never rejects) once this process has it,
 * or has the error that ended the wait: the settlement's job, delayed meanwhile, is then run again at once.
 */
export interface PendingOutcome {
  status: 'pending';
  transactionId: string;
  known: Promise<void>;
}

interface Wait {
  result?: { outcome: TransactionOutcome } | { error: unknown };
  known: Promise<void>;
  /** the in-slot wait ends then for every run that asks (ms since epoch) */
  inSlotUntil: number;
}

/** SETTLEMENT_IN_SLOT_WAIT_MS's default: a transaction sent synchronously (automine, a sync-send node) is seen at once. */
export const DEFAULT_IN_SLOT_WAIT_MS = 250;

export interface OutcomeWaitsOptions {
  /** how long `within` waits in the caller's job slot before answering pending (SETTLEMENT_IN_SLOT_WAIT_MS; default 250 ms) */
  inSlotWaitMs?: number;
  /** an outcome is kept this long for the jobs it wakes (a batch's settlements); default 10 s */
  keepOutcomeMs?: number;
  /**
   * an error that ended a wait is kept this long for the job it wakes, which may run in another worker
   * first and come back later; default 10 min
   */
  keepErrorMs?: number;
}

/**
 * Waits for transactions' outcomes without holding a settlement job's slot: the wait itself (receipt polling,
 * re-broadcasts, fee bumps: the provider's `waitForOutcome`) runs in the background of this process, once per
 * transaction however many settlements ask (a batch's), while each job asks for at most `inSlotWaitMs` and is
 * otherwise delayed until `known`. The provider's wait stays the single source of outcomes; this only decides
 * who waits for it. A process that dies loses nothing: the delayed job runs again in any worker and waits anew.
 */
export class OutcomeWaits {
  private readonly waits = new Map<string, Wait>();
  private readonly keepOutcomeMs: number;
  private readonly keepErrorMs: number;
  private readonly inSlotWaitMs: number;

  constructor(
    private readonly transactions: Pick<TransactionProvider, 'waitForOutcome'>,
    options: OutcomeWaitsOptions = {},
  ) {
    this.keepOutcomeMs = options.keepOutcomeMs ?? 10_000;
    this.keepErrorMs = options.keepErrorMs ?? 600_000;
    this.inSlotWaitMs = options.inSlotWaitMs ?? DEFAULT_IN_SLOT_WAIT_MS;
  }

  /**
   * The outcome if it is known, else pending. Runs wait for it in their slot only within `inSlotWaitMs` of the
   * wait's start (a synchronous send answers within it; a batch's settlements ask together); a run that finds
   * an older wait under way answers pending at once, so runs woken by their fallback delay cost no slot time.
   * An outcome is given to every settlement that asks for a while (one batch, one receipt). An error that ended
   * the wait is kept until a run asks (the job it woke may run in another worker first and come back later),
   * thrown to the runs asking at that moment, and then forgotten: the next ask, its job's retry, waits anew.
   * `confirmations` is the network's, the same for every ask of one transaction.
   */
  async within(transactionId: string, confirmations: number): Promise<TransactionOutcome | PendingOutcome> {
    const wait = this.waits.get(transactionId) ?? this.start(transactionId, confirmations);
    const inSlot = wait.inSlotUntil - Date.now();
    if (!wait.result && inSlot > 0) await Promise.race([wait.known, delay(inSlot)]);
    if (!wait.result) return { status: 'pending', transactionId, known: wait.known };
    if ('outcome' in wait.result) return wait.result.outcome;
    this.forget(transactionId, wait);
    throw wait.result.error;
  }

  /** Transactions whose outcome this process is waiting for (the x402_settlement_transactions_awaited gauge). */
  get awaited(): number {
    let count = 0;
    for (const wait of this.waits.values()) if (!wait.result) count += 1;
    return count;
  }

  private start(transactionId: string, confirmations: number): Wait {
    const wait: Wait = { known: Promise.resolve(), inSlotUntil: Date.now() + this.inSlotWaitMs };
    wait.known = this.transactions.waitForOutcome(transactionId, confirmations).then(
      (outcome) => this.end(transactionId, wait, { outcome }),
      (error: unknown) => this.end(transactionId, wait, { error }),
    );
    this.waits.set(transactionId, wait);
    return wait;
  }

  private end(transactionId: string, wait: Wait, result: NonNullable<Wait['result']>): void {
    wait.result = result;
    // results nobody comes for (their jobs ran in another worker and ended there) do not accumulate
    setTimeout(() => this.forget(transactionId, wait), 'outcome' in result ? this.keepOutcomeMs : this.keepErrorMs).unref();
  }

  private forget(transactionId: string, wait: Wait): void {
    if (this.waits.get(transactionId) === wait) this.waits.delete(transactionId);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
