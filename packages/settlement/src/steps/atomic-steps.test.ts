import { GasCapExceededError, type TransactionLog, type TransactionOutcome } from '@facilitator/evm-sending';
import type { StoredSettlementBatch } from '@facilitator/db';
import { executorInterface } from '@facilitator/evm-executor';
import { AbiCoder, id, Interface } from 'ethers';
import type { AtomicItemRequest, AtomicSettlement } from '../atomic/atomic-settlement';
import { ItemRefusedError } from '../atomic/executor-batches';
import {
  AMOUNT,
  FEE,
  GAS_CAPS,
  MERCHANT,
  NONCE,
  NOW,
  PAYER,
  PERMIT2_NONCE,
  PLAIN_SIGNATURE,
  permit2SettlementFixture,
  settlementFixture,
  stepHarness,
  TOKEN,
  transferLog,
  transferWithAuthorizationCalldata,
  TREASURY,
  fakeBlockHash,
} from '../testing/fakes';
import { collectFeeAndTransfer, recordAtomicExecution, recordAtomicSettlement } from './atomic-steps';
import { type StepResult, isWait } from '../step-outcome';

const HASH = '0x' + 'cd'.repeat(32);
const BATCH: StoredSettlementBatch = { id: 'bat_1', chainId: 84532, relayer: '0x44', to: TREASURY, data: '0x', gasCap: 1n, itemCount: 3 };

function executorLog(name: 'Settled' | 'NotSettled', args: unknown[], address = TREASURY): TransactionLog {
  const event = executorInterface.getEvent(name)!;
  const encoded = executorInterface.encodeEventLog(event, args);
  return { address, topics: encoded.topics, data: encoded.data };
}

/** `FeeNotCollected(Error("..."))` / `TransferNotExecuted(Error("..."))`, as settleOne reverts. */
function itemRevert(error: 'FeeNotCollected' | 'TransferNotExecuted', reason: string): string {
  const inner = id('Error(string)').slice(0, 10) + AbiCoder.defaultAbiCoder().encode(['string'], [reason]).slice(2);
  return executorInterface.encodeErrorResult(error, [inner]);
}

class FakeAtomic implements AtomicSettlement {
  placed: AtomicItemRequest[] = [];
  existing: StoredSettlementBatch | null = null;
  constructor(private readonly result: TransactionOutcome) {}
  async batchOf() {
    return this.existing;
  }
  async place(request: AtomicItemRequest) {
    this.placed.push(request);
    return BATCH;
  }
  async outcome() {
    return this.result;
  }
}

const confirmedWith = (logs: TransactionLog[]): TransactionOutcome => ({ status: 'confirmed', hash: HASH, blockNumber: 7, logs });
const atomicSettlement = () => settlementFixture({ state: 'collect_fee', settlementMode: 'atomic' });

/** A step harness on a network that settles atomically. */
function atomicHarness(atomic: AtomicSettlement, settlement = atomicSettlement()) {
  const h = stepHarness(settlement, { overrides: { atomic } });
  h.ctx.policy.networkPath = 'atomic';
  return h;
}

async function run(outcome: TransactionOutcome, prepare: (h: ReturnType<typeof stepHarness>) => void = () => undefined) {
  const atomic = new FakeAtomic(outcome);
  const h = atomicHarness(atomic);
  prepare(h);
  const result = await collectFeeAndTransfer(h.ctx);
  if (isWait(result)) throw new Error('unexpected wait');
  return { result: result as StepResult, atomic, h };
}

describe('collect_fee on the atomic path', () => {
  it('places the payment as one item (fee and transfer gas) and, when the item settled, goes to settled in one step through fee_collected and executing', async () => {
    const { result, atomic } = await run(confirmedWith([executorLog('Settled', [PAYER, NONCE])]));
    expect(atomic.placed).toHaveLength(1);
    // the payment's own direct call: the token's transferWithAuthorization (v, r, s for a plain ECDSA signature)
    expect(atomic.placed[0].item).toEqual({
      payer: PAYER,
      merchant: MERCHANT,
      amount: AMOUNT,
      nonce: NONCE,
      target: TOKEN,
      data: transferWithAuthorizationCalldata({ from: PAYER, to: MERCHANT, value: AMOUNT, validAfter: 0n, validBefore: BigInt(NOW + 3600), nonce: NONCE }, PLAIN_SIGNATURE),
      gas: GAS_CAPS.fee + GAS_CAPS.transfer,
    });
    expect(result).toMatchObject({
      to: 'settled',
      through: [
        { state: 'fee_collected', note: { fee_tx_hash: HASH, atomic: true, batch_id: 'bat_1', batch_size: 3 } },
        { state: 'executing', note: { tx_hash: HASH, atomic: true } },
      ],
      data: { feeTxHash: HASH, settlementTxHash: HASH, merchantPaid: true },
      note: { tx_hash: HASH, atomic: true },
    });
    // the spec orders the timestamps: the settlement's is the later, though one transaction gives both
    expect(result.data!.settledAt!.getTime()).toBeGreaterThan(result.data!.feeCollectedAt!.getTime());
  });

  it("places a Permit2 payment as an item calling x402's exact proxy (its settle, for the settlement's amount), and settles it on its Settled(payer, nonce)", async () => {
    const settlement = permit2SettlementFixture({ state: 'collect_fee', settlementMode: 'atomic' });
    const atomic = new FakeAtomic(confirmedWith([executorLog('Settled', [PAYER, settlement.nonce])]));
    const h = atomicHarness(atomic, settlement);
    const result = await collectFeeAndTransfer(h.ctx);
    const settle = new Interface([
      'function settle(((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit, address owner, (address to, uint256 validAfter) witness, bytes signature)',
    ]).encodeFunctionData('settle', [{ permitted: { token: TOKEN, amount: AMOUNT }, nonce: PERMIT2_NONCE, deadline: NOW + 3600 }, PAYER, { to: MERCHANT, validAfter: 0n }, PLAIN_SIGNATURE]);
    expect(atomic.placed[0].item).toEqual({
      payer: PAYER,
      merchant: MERCHANT,
      amount: AMOUNT,
      // Permit2's uint256 nonce as bytes32: the key of the item's event
      nonce: '0x' + PERMIT2_NONCE.toString(16).padStart(64, '0'),
      target: '0x402085c248eea27d92e8b30b2c58ed07f9e20001',
      data: settle,
      gas: expect.any(BigInt),
    });
    expect(result).toMatchObject({ to: 'settled', data: { feeTxHash: HASH, settlementTxHash: HASH, merchantPaid: true } });
  });

  it('reads the fee taken from its own item\'s logs: the stored fee, nothing rewritten', async () => {
    const logs = [transferLog(MERCHANT, TREASURY, FEE), transferLog(PAYER, MERCHANT, 1n), executorLog('Settled', [PAYER, NONCE])];
    const { result } = await run(confirmedWith(logs));
    expect(result.to).toBe('settled');
    expect(result.data).not.toHaveProperty('feeAmount');
    expect(result.through![0].note).not.toHaveProperty('fee_taken_differs');
  });

  it('records what the chain took when the executor took another fee than the stored one (its delegation changed in flight)', async () => {
    // the previous item's fee (another settlement of the same merchant) is not this item's
    const previous = [transferLog(MERCHANT, TREASURY, FEE), executorLog('Settled', [PAYER, '0x' + '01'.repeat(32)])];
    const logs = [...previous, transferLog(MERCHANT, TREASURY, 2n * FEE), transferLog(PAYER, MERCHANT, 1n), executorLog('Settled', [PAYER, NONCE])];
    const { result } = await run(confirmedWith(logs));
    expect(result).toMatchObject({
      to: 'settled',
      data: { feeTxHash: HASH, feeAmount: (2n * FEE).toString() },
      through: [{ state: 'fee_collected', note: { fee_taken_differs: { stored: FEE.toString(), taken: (2n * FEE).toString() } } }, { state: 'executing' }],
    });
  });

  it('only reads its own item: another payment settled in the same transaction is not this one', async () => {
    const other = executorLog('Settled', [PAYER, '0x' + '01'.repeat(32)]);
    await expect(run(confirmedWith([other]))).rejects.toThrow(/no outcome for settlement/);
    // nor a Settled event logged by any other address than the treasury: no executor ran there at all
    const { result } = await run(confirmedWith([executorLog('Settled', [PAYER, NONCE], '0x' + '99'.repeat(20))]));
    expect(result).toMatchObject({ to: 'failed', data: { paymentKey: null, errorDetails: { fee_status: 'not_collected' } } });
  });

  it('fails an item whose fee was refused with insufficient_allowance when the allowance is what ran out; the merchant paid nothing', async () => {
    const logs = [executorLog('NotSettled', [PAYER, NONCE, itemRevert('FeeNotCollected', 'ERC20: transfer amount exceeds allowance')])];
    const { result } = await run(confirmedWith(logs), (h) => (h.chain.allowanceOf = 0n));
    expect(result).toMatchObject({ to: 'failed', data: { errorCode: 'insufficient_allowance', paymentKey: null, feeTxHash: HASH } });
  });

  it('fails an item whose fee was refused for another reason with fee_collection_failed', async () => {
    const logs = [executorLog('NotSettled', [PAYER, NONCE, itemRevert('FeeNotCollected', 'ERC20: transfer amount exceeds balance')])];
    const { result } = await run(confirmedWith(logs));
    expect(result).toMatchObject({ to: 'failed', data: { errorCode: 'fee_collection_failed', paymentKey: null } });
    expect((result.data!.errorDetails as Record<string, unknown>).reason).toBe('ERC20: transfer amount exceeds balance');
  });

  it('fails an item whose transfer failed with the fee undone: merchant and payer charged nothing', async () => {
    const logs = [executorLog('NotSettled', [PAYER, NONCE, itemRevert('TransferNotExecuted', 'FiatTokenV2: authorization is expired')])];
    const { result } = await run(confirmedWith(logs));
    expect(result).toMatchObject({
      to: 'failed',
      data: { errorCode: 'settlement_failed', paymentKey: null, errorDetails: { reason: 'FiatTokenV2: authorization is expired', fee_status: 'not_collected', merchant_charged: false, customer_charged: false, tx_hash: HASH } },
    });
  });

  it('settles a payment executed by someone else before our transaction on their transaction: paid, no fee, watched from its block', async () => {
    const logs = [executorLog('NotSettled', [PAYER, NONCE, itemRevert('TransferNotExecuted', 'FiatTokenV2: authorization is used or canceled')])];
    const theirs = '0x' + 'ee'.repeat(32);
    const { result } = await run(confirmedWith(logs), (h) => {
      h.chain.authorizationUse = { transactionHash: theirs, blockNumber: 6, paidToMerchant: 1_000_000n };
    });
    expect(result).toMatchObject({
      to: 'settled',
      data: { settlementTxHash: theirs, merchantPaid: true, foreignExecution: { txHash: theirs, blockNumber: 6, blockHash: fakeBlockHash(6) } },
      note: { executed_by_third_party: true, fee_collected: false, our_tx_hash: HASH },
    });
    expect(result.data).not.toHaveProperty('feeTxHash');
    expect(result.data).not.toHaveProperty('paymentKey');
  });

  it('waits, reporting nothing, while the transaction that executed it has fewer confirmations than ours would need', async () => {
    const logs = [executorLog('NotSettled', [PAYER, NONCE, itemRevert('TransferNotExecuted', 'FiatTokenV2: authorization is used or canceled')])];
    const theirs = '0x' + 'ee'.repeat(32);
    const h = atomicHarness(new FakeAtomic(confirmedWith(logs)));
    h.chain.authorizationUse = { transactionHash: theirs, blockNumber: 101, paidToMerchant: 1_000_000n };
    h.ctx.network = { ...h.ctx.network, confirmations: 3 };
    expect(await collectFeeAndTransfer(h.ctx)).toEqual({ wait: { reason: 'execution_confirming', detail: { tx_hash: theirs, block: 101, confirmations: 1, required: 3 } } });
  });

  it('fails, nothing moved, a settle transaction mined without any executor log (the delegation was gone)', async () => {
    const { result } = await run(confirmedWith([]));
    expect(result).toMatchObject({ to: 'failed', data: { errorCode: 'settlement_failed', paymentKey: null, errorDetails: { fee_status: 'not_collected' } } });
  });

  it('goes on sequentially when the network left the atomic path before the settlement was placed', async () => {
    const atomic = new FakeAtomic(confirmedWith([]));
    const h = stepHarness(atomicSettlement(), { overrides: { atomic } });
    h.ctx.policy.networkPath = 'sequential';
    const result = await collectFeeAndTransfer(h.ctx);
    expect(result).toMatchObject({ to: 'fee_collected', data: { settlementMode: 'sequential' } });
    expect(atomic.placed).toEqual([]);
    expect(h.transactions.sent.map((t) => t.purpose)).toEqual(['fee']);
  });

  it('fails every item of a transaction that reverted whole, nothing charged', async () => {
    const { result } = await run({ status: 'reverted', hash: HASH, blockNumber: 7, reason: 'out of gas' });
    expect(result).toMatchObject({ to: 'failed', data: { errorCode: 'settlement_failed', paymentKey: null, errorDetails: { fee_status: 'not_collected', merchant_charged: false } } });
  });

  it('after a crash, waits for the stored batch instead of placing the payment again', async () => {
    const atomic = new FakeAtomic(confirmedWith([executorLog('Settled', [PAYER, NONCE])]));
    atomic.existing = BATCH;
    const h = atomicHarness(atomic);
    expect(await collectFeeAndTransfer(h.ctx)).toMatchObject({ to: 'settled' });
    expect(atomic.placed).toEqual([]);
  });

  it('places nothing for a merchant whose balance is below the fee', async () => {
    const atomic = new FakeAtomic(confirmedWith([]));
    const h = atomicHarness(atomic);
    h.chain.balance = FEE - 1n;
    expect(await collectFeeAndTransfer(h.ctx)).toMatchObject({ to: 'failed', data: { errorCode: 'fee_collection_failed' } });
    expect(atomic.placed).toEqual([]);
  });
});

describe('fee_collected and executing on the atomic path', () => {
  it('walk on to settled with the one transaction as both hashes, the settlement timestamp after the fee', async () => {
    const feeCollectedAt = new Date(Date.now() + 60_000); // even a clock behind the fee's time keeps the order
    const h = stepHarness(settlementFixture({ state: 'fee_collected', settlementMode: 'atomic', feeTxHash: HASH, feeCollectedAt }));
    expect(await recordAtomicExecution(h.ctx)).toEqual({ to: 'executing', note: { tx_hash: HASH, atomic: true } });
    const settled = (await recordAtomicSettlement(h.ctx)) as StepResult;
    expect(settled).toMatchObject({ to: 'settled', data: { settlementTxHash: HASH, merchantPaid: true } });
    expect(settled.data!.settledAt!.getTime()).toBeGreaterThan(feeCollectedAt.getTime());
    expect(h.transactions.sent).toEqual([]);
  });

  describe('contract-wallet payers and unsendable items', () => {
    it("marks a contract-wallet payer's item to go alone, with its kind's gas; an ordinary payer's not", async () => {
      const { atomic } = await run(confirmedWith([executorLog('Settled', [PAYER, NONCE])]), (h) => h.chain.withCode.add(PAYER.toLowerCase()));
      expect(atomic.placed[0]).toMatchObject({ alone: true, item: { gas: GAS_CAPS.fee + GAS_CAPS.contractTransfer } });
      const plain = await run(confirmedWith([executorLog('Settled', [PAYER, NONCE])]));
      expect(plain.atomic.placed[0].alone).toBe(false);
    });

    it('fails an item its batch left out (estimate fails with it) released, nothing charged', async () => {
      const atomic = new FakeAtomic(confirmedWith([]));
      atomic.place = async () => {
        throw new ItemRefusedError('the settle transaction would revert: hostile', { simulation: 'settle' });
      };
      const h = atomicHarness(atomic);
      const result = (await collectFeeAndTransfer(h.ctx)) as StepResult;
      expect(result).toMatchObject({
        to: 'failed',
        data: { errorCode: 'settlement_failed', paymentKey: null, errorDetails: { reason: 'the settle transaction would revert: hostile', fee_status: 'not_collected', merchant_charged: false } },
      });
    });

    it('settles an item its batch left out because someone else executed the payment meanwhile (paid, no fee)', async () => {
      const atomic = new FakeAtomic(confirmedWith([]));
      atomic.place = async () => {
        throw new ItemRefusedError('the settle transaction would revert: FiatTokenV2: authorization is used or canceled', { simulation: 'settle' });
      };
      const h = atomicHarness(atomic);
      h.chain.authorizationUse = { transactionHash: '0xfront', blockNumber: 100, paidToMerchant: AMOUNT };
      expect(await collectFeeAndTransfer(h.ctx)).toMatchObject({
        to: 'settled',
        data: { settlementTxHash: '0xfront', merchantPaid: true, foreignExecution: { txHash: '0xfront', blockNumber: 100 } },
        note: { executed_by_third_party: true },
      });
    });

    it('fails a batch of its own whose estimate now fails and for which nothing was ever signed; a shared one is left to retry', async () => {
      const refuse = (itemCount: number) => {
        const atomic = new FakeAtomic(confirmedWith([]));
        atomic.existing = { ...BATCH, itemCount };
        atomic.outcome = async () => {
          throw new GasCapExceededError(900_000n, 500_000n);
        };
        return atomicHarness(atomic);
      };
      const alone = refuse(1);
      expect(await collectFeeAndTransfer(alone.ctx)).toMatchObject({ to: 'failed', data: { paymentKey: null, errorDetails: { fee_status: 'not_collected', batch_id: 'bat_1' } } });
      await expect(collectFeeAndTransfer(refuse(3).ctx)).rejects.toBeInstanceOf(GasCapExceededError);
    });
  });
});
