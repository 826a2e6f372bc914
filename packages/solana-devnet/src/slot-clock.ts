import type { LiteSVM } from 'litesvm';

export type Commitment = 'processed' | 'confirmed' | 'finalized';

const SLOTS_PER_EPOCH = 432_000n;

/**
 * Slots, blockhashes and commitment levels, which LiteSVM has no notion of: each slot warps LiteSVM's clock
 * and expires its blockhash, and the clock keeps the window of recent blockhashes that a validator accepts
 * (LiteSVM's own check knows only the latest one, so the chain switches it off and asks this window).
 * Every slot has a block (no skipped leaders), so a block height is a slot.
 */
export class SlotClock {
  private current: bigint;
  private readonly first: bigint;
  private readonly blockhashSlots = new Map<string, bigint>();
  private readonly blockhashAtSlot = new Map<bigint, string>();

  constructor(
    private readonly svm: LiteSVM,
    readonly blockhashMaxAgeSlots: number,
    readonly confirmedAfterSlots: number,
    readonly finalizedAfterSlots: number,
  ) {
    if (finalizedAfterSlots < confirmedAfterSlots) throw new Error('finalizedAfterSlots must be at least confirmedAfterSlots');
    this.current = svm.getClock().slot;
    this.first = this.current;
    this.recordBlockhash();
  }

  /** The slot at a commitment level: confirmed and finalized lag the processed slot by their depths. */
  slot(commitment: Commitment): bigint {
    const lag = commitment === 'processed' ? 0n : BigInt(commitment === 'confirmed' ? this.confirmedAfterSlots : this.finalizedAfterSlots);
    const slot = this.current - lag;
    return slot < this.first ? this.first : slot;
  }

  epochInfo(commitment: Commitment) {
    const slot = this.slot(commitment);
    return { absoluteSlot: slot, blockHeight: slot, epoch: slot / SLOTS_PER_EPOCH, slotIndex: slot % SLOTS_PER_EPOCH, slotsInEpoch: SLOTS_PER_EPOCH };
  }

  advance(count: number): void {
    for (let i = 0; i < count; i++) {
      this.current += 1n;
      this.svm.warpToSlot(this.current);
      const clock = this.svm.getClock();
      clock.unixTimestamp = BigInt(Math.floor(Date.now() / 1000));
      this.svm.setClock(clock);
      this.svm.expireBlockhash();
      this.recordBlockhash();
    }
  }

  private recordBlockhash(): void {
    const blockhash = this.svm.latestBlockhash();
    this.blockhashSlots.set(blockhash, this.current);
    this.blockhashAtSlot.set(this.current, blockhash);
    // expired hashes are kept a while, so isBlockhashValid answers false for them rather than not knowing them
    const forget = this.current - BigInt(Math.max(this.blockhashMaxAgeSlots, this.finalizedAfterSlots) * 4);
    const old = this.blockhashAtSlot.get(forget);
    if (old !== undefined) {
      this.blockhashAtSlot.delete(forget);
      this.blockhashSlots.delete(old);
    }
  }

  /** The blockhash of the block at `commitment`, valid up to and including block height `lastValidBlockHeight`. */
  latestBlockhash(commitment: Commitment): { blockhash: string; lastValidBlockHeight: bigint } {
    const slot = this.slot(commitment);
    return { blockhash: this.blockhashAtSlot.get(slot)!, lastValidBlockHeight: slot + BigInt(this.blockhashMaxAgeSlots) };
  }

  /** A transaction may land while the block height has not passed its blockhash's lastValidBlockHeight. */
  isBlockhashValid(blockhash: string): boolean {
    const slot = this.blockhashSlots.get(blockhash);
    return slot !== undefined && this.current <= slot + BigInt(this.blockhashMaxAgeSlots);
  }

  /** Where a transaction that landed in `landedSlot` stands now. */
  confirmation(landedSlot: bigint): { confirmationStatus: Commitment; confirmations: bigint | null } {
    const age = this.current - landedSlot;
    if (age >= BigInt(this.finalizedAfterSlots)) return { confirmationStatus: 'finalized', confirmations: null };
    return { confirmationStatus: age >= BigInt(this.confirmedAfterSlots) ? 'confirmed' : 'processed', confirmations: age };
  }
}
