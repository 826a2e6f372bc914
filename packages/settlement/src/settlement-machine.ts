import type { TransactionProvider } from '@facilitator/evm-sending';
import type { Settlement, SettlementStore, SettlementState } from '@facilitator/db';
import type { WebhookOutbox } from '@facilitator/webhooks';
import type { SettlementAccounting } from './accounting';
import type { FundedRelayers } from './funded-relayers';
import { SEQUENTIAL_EVERYWHERE, type SettlementPathPolicy } from './settlement-path-policy';
import type { AtomicSettlement } from './atomic/atomic-settlement';
import type { WalletDeploymentGuard } from './wallet-deployment-guard';
import type { ErrorClass } from './error-classes';
import { failed, settlementDoomed, settlementFailedAfterFee } from './failures';
import { transitionWithFinalEvent } from './final-transition';
import { PaymentOutcomeUnknownError } from './payment-outcome-unknown';
import { SettlementEndedError } from './settlement-ended';
import { canTransition, isFinal } from './states';
import type { MerchantPausePolicy, SettlementChain, SettlementNetwork, StepContext } from './step';
import { STEPS_BY_FAMILY, type ProcessingState, type StepTable } from './steps';
import { SettlementWaitingError } from './waiting';
import { SettlementAwaitingChainError } from './awaiting-chain';
import type { OutcomeWaits } from './outcome-waits';
import type { SettlementAdmission } from './settlement-admission';
import { type StepResult, isWait, type StepWait, isAwait } from './step-outcome';
import { WAIT_RETRY_MS, type SettlementWaitReason } from './wait-reasons';
import { reservationRefusal } from './steps/reservation-refusal';

const DEFAULT_CHAIN_RECHECK_MS = 30_000;

/** What the machine reads and writes of the settlements table (a SettlementStore). */
export type SettlementMachineStore = Pick<
  SettlementStore,
  'findWithVerification' | 'clearAttention' | 'markNeedsAttention' | 'markWaiting' | 'transition' | 'transitionReservingFee' | 'feeRevertsOfMerchant' | 'claimSend' | 'claimTransfer'
>;

interface SettlementMachineOptions {
  settlements: SettlementMachineStore;
  networks: ReadonlyMap<number, SettlementNetwork<SettlementChain>>;
  transactions: TransactionProvider;
  /**
   * the process's one wait for transactions' outcomes (shared with the atomic path's batches): a step waits in
   * its job's slot for at most SETTLEMENT_IN_SLOT_WAIT_MS, then gives the slot up until the outcome is known
   */
  outcomes: OutcomeWaits;
  /**
   * the longest a job that gave up its slot stays delayed: the fallback when the process waiting for its
   * transaction dies (SETTLEMENT_CHAIN_RECHECK_MS; default 30 s)
   */
  chainRecheckMs?: number;
  treasury: string;
  /** this worker holds the treasury's key, so it can take the sequential path (default true) */
  treasurySigns?: boolean;
  /** seals the settlements whose pre-flight passed here; the sequential fee is sent only for a sealed one */
  admission?: SettlementAdmission;
  /** this worker's relayer keys in turn, the funded ones only: the same rotation the atomic batches use */
  relayers: FundedRelayers;
  /**
   * the fee this worker's executor takes (FEE_AMOUNT, checked against the delegation): only settlements
   * whose own stored fee equals it go through the executor; each settlement is charged its row's fee
   */
  executorFee: bigint;
  expiryMarginSeconds: number;
  outbox: Pick<WebhookOutbox, 'enqueue' | 'row'>;
  merchantPause: MerchantPausePolicy;
  /** which path each network allows new settlements (default: sequential everywhere) */
  paths?: SettlementPathPolicy;
  /** the atomic path's batches (networks the path policy calls atomic need it) */
  atomic?: AtomicSettlement;
  /** checks and limits before an ERC-6492 payer's wallet is deployed; absent: no wallet is deployed */
  walletDeployments?: WalletDeploymentGuard;
  /** failure accounting, minimum re-check and the payer's value in flight (see accounting.ts) */
  accounting?: SettlementAccounting;
  now?: () => number;
  onTransition?: (event: SettlementTransitionEvent) => void;
  /** told each time a settlement is found waiting (metrics) */
  onWaiting?: (settlementId: string, reason: SettlementWaitReason) => void;
}

export interface SettlementTransitionEvent {
  settlementId: string;
  /** the settlement as it was before this transition */
  settlement: Settlement;
  from: SettlementState;
  to: SettlementState;
  note?: Record<string, unknown>;
}

/** Thrown when a job names a settlement that does not exist; retrying cannot help. */
export class UnknownSettlementError extends Error {}

/**
 * Advances a settlement through the spec's state machine until it is final. Each step's outcome is
 * persisted (state, fields, history row, and the final webhook event) before the next step runs, so a
 * crash at any moment resumes from the last persisted state; steps are idempotent against the chain.
 */
export class SettlementMachine {
  private readonly outcomes: OutcomeWaits;

  constructor(private readonly options: SettlementMachineOptions) {
    this.outcomes = options.outcomes;
  }

  async advance(settlementId: string): Promise<SettlementState> {
    let settlement = await this.load(settlementId);
    // run again by an operator (Bull Board retry, or POST /v1/settlements/{id}/retry): off the attention list
    if (settlement.attentionAt) await this.options.settlements.clearAttention(settlementId);
    const code = new CodeReads(this.options.networks.get(settlement.chainId)?.usdc);
    const steps = this.stepsOf(settlement);
    for (;;) {
      if (isFinal(settlement.state)) return settlement.state;
      const state = settlement.state as ProcessingState;
      // code read so far is kept only for steps that read it before they send anything (a wallet deployment
      // sends first, then looks at the payer's code again); once a step may have sent, every ask reads anew
      if (!CODE_READ_BEFORE_SENDING.includes(state)) code.stopKeeping();
      const result = await steps[state](this.context(settlement, code)).catch((error: unknown) => {
        // a settle request stopped it before anything was sent: read it again, final
        if (error instanceof SettlementEndedError) return undefined;
        throw error;
      });
      if (SENDS.includes(state)) code.stopKeeping();
      if (!result) {
        settlement = await this.load(settlementId);
        continue;
      }
      if (isWait(result)) return this.recordWait(settlement, result);
      if (isAwait(result)) {
        const { transactionId, known } = result.awaiting;
        throw new SettlementAwaitingChainError(settlement.id, transactionId, this.options.chainRecheckMs ?? DEFAULT_CHAIN_RECHECK_MS, known);
      }
      const moved = await this.persistChecked(settlement, state, result);
      // null: another worker advanced it meanwhile, so what we hold is stale
      settlement = moved ? { ...moved, verification: settlement.verification } : await this.load(settlementId);
      // the step reserved a wallet deployment, and a settle request stopped the settlement before it could use it
      if (!moved && result.to === 'deploying_wallet' && isFinal(settlement.state)) await this.options.walletDeployments?.release(settlementId);
    }
  }

  /** Shows the wait on the status record, then ends this run: the job is delayed, not failed. */
  private async recordWait(settlement: StepContext['settlement'], { wait }: StepWait): Promise<never> {
    await this.options.settlements.markWaiting(settlement.id, settlement.state, wait.reason, wait.detail);
    this.options.onWaiting?.(settlement.id, wait.reason);
    throw new SettlementWaitingError(settlement.id, wait.reason, WAIT_RETRY_MS[wait.reason]);
  }

  /**
   * The job will not run again (a permanent error, or transient ones past the attempt limit). When the
   * money state is known — nothing sent, or only the fee — the settlement ends `failed` with what
   * happened; otherwise it is parked for an operator (state kept, attention flag raised).
   */
  async giveUp(settlementId: string, error: unknown, errorClass: ErrorClass): Promise<'parked' | SettlementState> {
    const settlement = await this.load(settlementId);
    if (isFinal(settlement.state)) return settlement.state;
    const reason = `${errorClass} error: ${(error as Error)?.message ?? String(error)}`.slice(0, 500);
    // the chain itself could not say whether the merchant was paid: no state's rule knows better
    const ending = error instanceof PaymentOutcomeUnknownError ? undefined : await this.endingWhenMoneyStateKnown(settlement, reason);
    if (ending) {
      const moved = await this.persistChecked(settlement, settlement.state, ending);
      return moved ? moved.state : (await this.load(settlementId)).state;
    }
    await this.options.settlements.markNeedsAttention(settlementId, `${settlement.state}: ${reason}`);
    return 'parked';
  }

  private async endingWhenMoneyStateKnown(settlement: StepContext['settlement'], reason: string): Promise<StepResult | undefined> {
    const { transactions } = this.options;
    if (settlement.settlementMode === 'atomic') return this.atomicEnding(settlement, reason);
    switch (settlement.state) {
      // a wallet deployment moves no money of the payer or the merchant, whatever became of it
      case 'pending':
      case 'deploying_wallet':
      case 'check_allowance':
        return failed(settlementDoomed(reason), true);
      case 'collect_fee':
        // a fee row without a signed version still holds a nonce that will be sent: open
        return (await transactions.hasAny(settlement.id, 'fee')) ? undefined : failed(settlementDoomed(reason), true);
      case 'fee_collected':
        if (await transactions.hasAny(settlement.id, 'transfer')) return undefined;
        return failed(
          settlementFailedAfterFee({
            reason,
            feeAmount: BigInt(settlement.feeAmount),
            feeTxHash: settlement.feeTxHash ?? '',
            settlementError: reason,
            customerCharged: false,
          }),
          false,
        );
      default:
        return undefined;
    }
  }

  /**
   * Atomic path: only a settlement never placed in a batch, and with no fee of its own, is known to have
   * moved nothing. A stored batch may still be sent by another of its settlements; a row fixed atomic whose
   * fee went on sequentially (the network left the atomic path, or this worker's executor takes another fee)
   * says so only with its next transition, and its fee transaction, even unsigned, may still be mined; after
   * collect_fee both fee and transfer happened.
   */
  private async atomicEnding(settlement: StepContext['settlement'], reason: string): Promise<StepResult | undefined> {
    if (settlement.state !== 'collect_fee') return undefined;
    if (!this.options.atomic || (await this.options.atomic.batchOf(settlement.id))) return undefined;
    if (await this.options.transactions.hasAny(settlement.id, 'fee')) return undefined;
    return failed(settlementDoomed(reason), true);
  }

  private async load(settlementId: string): Promise<StepContext['settlement']> {
    const settlement = await this.options.settlements.findWithVerification(settlementId);
    if (!settlement) throw new UnknownSettlementError(`no settlement ${settlementId}`);
    return settlement;
  }

  /** Persists a step's result after checking it against the transition table. */
  async persistChecked(settlement: StepContext['settlement'], from: SettlementState, result: StepResult): Promise<Settlement | null> {
    for (const [a, b] of hopsOf(from, result)) {
      if (!canTransition(a.state, b.state)) throw new Error(`illegal settlement transition ${a.state} -> ${b.state}`);
    }
    if (result.through?.length && result.reserveFee) throw new Error('a transition reserving a fee passes through no other state');
    if (!result.reserveFee) return this.persist(settlement, from, result);
    const { request } = result.reserveFee;
    const { moved, inFlight, payer } = await this.options.settlements.transitionReservingFee(
      { id: settlement.id, from, to: result.to, data: result.data, note: result.note },
      request,
    );
    if (moved) {
      this.options.onTransition?.({ settlementId: settlement.id, settlement, from, to: result.to, note: result.note });
      return moved;
    }
    // null with room to spare: another worker moved it meanwhile; otherwise the merchant cannot pay this fee
    // now, or the payer's balance cannot back this payment on top of its others in flight
    const merchantFits = inFlight + request.fee <= minOf(request.allowance, request.balance);
    const payerFits =
      !request.payer ||
      !payer ||
      (payer.value + request.payer.value <= request.payer.balance &&
        (request.payer.maxInFlight === undefined || payer.items < request.payer.maxInFlight) &&
        (request.payer.pause === undefined || (payer.failures ?? 0) < request.payer.pause.afterFailures));
    if (merchantFits && payerFits) return null;
    const refusal = reservationRefusal(result.reserveFee.refusal, inFlight, payer, this.nowSeconds());
    if (isWait(refusal)) return this.recordWait(settlement, refusal);
    return this.persistChecked(settlement, from, refusal);
  }

  private async persist(settlement: StepContext['settlement'], from: SettlementState, result: StepResult): Promise<Settlement | null> {
    const moved = await transitionWithFinalEvent(
      this.options.settlements,
      this.options.outbox,
      { id: settlement.id, from, to: result.to, data: result.data, note: result.note, ...(result.through?.length ? { through: result.through } : {}) },
      settlement.verification.webhookUrl,
    );
    if (moved) {
      for (const [a, b] of hopsOf(from, result)) {
        this.options.onTransition?.({ settlementId: settlement.id, settlement, from: a.state, to: b.state, note: b.note });
      }
    }
    return moved;
  }

  /** Unix seconds, as the steps see them */
  private nowSeconds(): number {
    return this.options.now ? this.options.now() : Math.floor(Date.now() / 1000);
  }

  /**
   * the step table of the settlement's network's family; a network not enabled here runs nothing, nor does a row
   * whose network is not its chain's: every writer of ours stores its chain's network, so that row is a database
   * writer's (its payment keyed another way than the honest row of the same payment), and nothing of it is read or sent
   */
  private stepsOf(settlement: Settlement): StepTable {
    const network = this.options.networks.get(settlement.chainId);
    if (!network) throw new Error(`settlement ${settlement.id} is on chain ${settlement.chainId}, which is not enabled`);
    if (settlement.network !== network.caip2) {
      throw new Error(`settlement ${settlement.id} names network ${JSON.stringify(settlement.network)}, but its chain ${settlement.chainId} is ${network.caip2}: not settled`);
    }
    const steps = STEPS_BY_FAMILY[network.family];
    if (!steps) throw new Error(`settlement ${settlement.id} is on a network of family ${network.family}, which this worker does not settle`);
    return steps;
  }

  private context(settlement: StepContext['settlement'], code: CodeReads): StepContext {
    const network = this.options.networks.get(settlement.chainId);
    if (!network) throw new Error(`settlement ${settlement.id} is on chain ${settlement.chainId}, which is not enabled`);
    const { relayers } = this.options;
    return {
      settlement,
      network,
      chain: {
        transactions: this.options.transactions,
        outcomes: this.outcomes,
        codeAt: (address) => code.at(address),
        atomic: this.options.atomic,
      },
      signers: {
        relayers: relayers.addresses,
        nextRelayer: () => relayers.next(settlement.chainId),
        anyFundedRelayer: () => relayers.anyFunded(settlement.chainId),
        treasury: this.options.treasury,
        treasurySigns: this.options.treasurySigns ?? true,
        admission: this.options.admission,
      },
      policy: {
        networkPath: (this.options.paths ?? SEQUENTIAL_EVERYWHERE).pathOf(settlement.chainId),
        // the row's fee, never this worker's configuration: what is charged is what the merchant is told
        feeAmount: BigInt(settlement.feeAmount),
        executorFee: this.options.executorFee,
        expiryMarginSeconds: this.options.expiryMarginSeconds,
        now: () => this.nowSeconds(),
        merchantPause: this.options.merchantPause,
        accounting: this.options.accounting,
        walletDeployments: this.options.walletDeployments,
      },
      records: {
        claimSend: () => this.options.settlements.claimSend(settlement.id),
        claimTransfer: () => this.options.settlements.claimTransfer(settlement.id),
        feeRevertsOfMerchant: (merchant, chainId, since) => this.options.settlements.feeRevertsOfMerchant(merchant, chainId, since),
      },
    };
  }
}

/**
 * The states whose steps read code only before sending anything: `pending` and `check_allowance` send nothing,
 * `collect_fee` reads the payer's (and treasury's) code before it places the fee. Not `deploying_wallet`: it
 * deploys the payer's wallet and then reads the payer's code again.
 */
const CODE_READ_BEFORE_SENDING: readonly SettlementState[] = ['pending', 'check_allowance', 'collect_fee'];
/** Of those, the ones whose step may send: after it, code is read anew. */
const SENDS: readonly SettlementState[] = ['collect_fee'];

/**
 * `hasCode` within one run of the machine: asked once per address while the run's steps send nothing, then
 * asked anew (a wallet deployment, or any transaction of ours, may have changed what an address holds).
 */
class CodeReads {
  private readonly known = new Map<string, Promise<boolean>>();
  private keeping = true;

  constructor(private readonly chain: Pick<SettlementChain, 'hasCode'> | undefined) {}

  at(address: string): Promise<boolean> {
    if (!this.chain) throw new Error('no chain to read code from');
    if (!this.keeping) return this.chain.hasCode(address);
    const key = address.toLowerCase();
    let read = this.known.get(key);
    if (!read) {
      read = this.chain.hasCode(address);
      // a failed read is not kept: the next ask tries again
      read.catch(() => this.known.delete(key));
      this.known.set(key, read);
    }
    return read;
  }

  /** From now on in this run every ask reads the chain again. */
  stopKeeping(): void {
    this.keeping = false;
    this.known.clear();
  }
}

/** Each step of a result, as (from, to) pairs: one, or one per state it passes through and one more. */
function hopsOf(from: SettlementState, result: StepResult): Array<[{ state: SettlementState }, { state: SettlementState; note?: Record<string, unknown> }]> {
  const states = [{ state: from }, ...(result.through ?? []), { state: result.to, note: result.note }];
  return states.slice(1).map((hop, i) => [states[i], hop]);
}

function minOf(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
