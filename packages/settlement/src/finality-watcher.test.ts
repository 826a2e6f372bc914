import type { AuthorizationUse } from '@facilitator/evm-chain';
import type { AwaitingFinality, ForeignExecutionWatch, SettlementRow, WebhookEventRow } from '@facilitator/db';
import { createSilentLogger } from '@facilitator/logging';
import { executorInterface } from '@facilitator/evm-executor';
import { id, Interface } from 'ethers';
import { FinalityWatcher, type FinalityChain, type FinalityReceipt } from './finality-watcher';
import type { SettlementWithVerification } from './step';
import { AMOUNT, CHAIN_ID, FakeChain, FakeOutbox, MERCHANT, NOW, PAYER, PERMIT2_NONCE, permit2SettlementFixture, PLAIN_SIGNATURE, settlementFixture, TOKEN, transferLog } from './testing/fakes';

// Reorg watching against in-memory rows and a scripted chain: what is marked, noted, sent again and told.

const DEPTH = 5;
/** x402's exact Permit2 proxy, its settle call of the fixtures' Permit2 payment, and the event it emits after the transfer */
const PROXY = '0x402085c248eea27d92e8b30b2c58ed07f9e20001';
const PERMIT2_SETTLE_DATA = new Interface([
  'function settle(((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit, address owner, (address to, uint256 validAfter) witness, bytes signature)',
]).encodeFunctionData('settle', [{ permitted: { token: TOKEN, amount: AMOUNT }, nonce: PERMIT2_NONCE, deadline: NOW + 3600 }, PAYER, { to: MERCHANT, validAfter: 0n }, PLAIN_SIGNATURE]);
const PROXY_SETTLED = { address: PROXY, topics: [id('Settled()')], data: '0x' };
const permit2Fixture = (): SettlementWithVerification => {
  const fixture = permit2SettlementFixture();
  return { ...fixture, verification: { ...fixture.verification, webhookUrl: WEBHOOK_URL } };
};
const PERMIT2 = '0x000000000022d473030f116ddee9f6b43ac78ba3';
/** the fixtures' Permit2 nonce marked used in Permit2's bitmap (every execution sets it) */
function permit2NonceSpent(chain: FakeChain): void {
  const word = new Interface(['function nonceBitmap(address,uint256) view returns (uint256)']).encodeFunctionData('nonceBitmap', [PAYER, PERMIT2_NONCE >> 8n]);
  chain.contractAnswers.set(`${PERMIT2}:${word}`, '0x' + (1n << (PERMIT2_NONCE & 0xffn)).toString(16).padStart(64, '0'));
}
const WEBHOOK_URL = 'https://merchant.example/hooks';
const TREASURY = '0x7ea5000000000000000000000000000000000001';

function transferRow(fields: Partial<AwaitingFinality> = {}): AwaitingFinality {
  return { id: 'ctx_1', settlementId: 'stl_1', purpose: 'transfer', status: 'confirmed', minedHash: '0xabc', blockNumber: 100, blockHash: '0xb100', reorgCount: 0, rawTransaction: '0x02f8raw', ...fields };
}

type Receipt = Omit<FinalityReceipt, 'logs'> & { logs?: FinalityReceipt['logs'] };
type ChainState = {
  head: number;
  blocks: Map<number, string>;
  receipts: Map<string, Receipt>;
  nonceTaken?: boolean;
  /** payer:nonce -> the transaction that used the authorization, and what it paid the merchant */
  authorizationUses?: Map<string, { transactionHash: string; paidToMerchant: bigint; to?: string }>;
  /** what a payment's mechanism reads (Permit2's transfers through the proxy): a fake chain the test fills */
  mechanismChain?: FakeChain;
};

/** The mechanisms' chain: EIP-3009's AuthorizationUsed from the test's map, the rest from a FakeChain. */
class ScriptedMechanismChain extends FakeChain {
  constructor(private readonly uses: () => ChainState['authorizationUses']) {
    super();
  }

  override async findAuthorizationUse(authorizer: string, nonce: string): Promise<AuthorizationUse | undefined> {
    const use = this.uses()?.get(`${authorizer}:${nonce}`);
    return use && { blockNumber: 0, ...use };
  }
}

function harness(rows: AwaitingFinality[], chainState: ChainState, batch?: SettlementWithVerification[], foreign: ForeignExecutionWatch[] = []) {
  const calls: string[] = [];
  const finality: Array<{ id: string; update: { finality?: string; reorg?: boolean; note: Record<string, unknown> }; event?: WebhookEventRow }> = [];
  const stored = rows.map((r) => ({ ...r }));
  const chain: FinalityChain = {
    head: async () => chainState.head,
    blockHash: async (_chainId, n) => chainState.blocks.get(n) ?? null,
    receipt: async (_chainId, hash) => {
      calls.push(`receipt(${hash})`);
      const receipt = chainState.receipts.get(hash);
      return receipt ? { logs: [], ...receipt } : null;
    },
    mechanismChain: () => chainState.mechanismChain ?? new ScriptedMechanismChain(() => chainState.authorizationUses),
    rebroadcast: async (_chainId, raw, hash) => {
      calls.push(`rebroadcast(${raw},${hash})`);
      return chainState.nonceTaken ? 'nonce_taken' : 'sent';
    },
  };
  const settlement = settlementFixture({ state: 'settled', merchantPaid: true, feeCollectedAt: new Date() }, { webhookUrl: WEBHOOK_URL });
  const settlementById = (id: string) => batch?.find((b) => b.id === id) ?? settlement;
  const watcher = new FinalityWatcher({
    transactions: {
      findAwaitingFinality: async () => stored.filter((r) => !calls.includes(`final(${r.id})`) && !calls.includes(`lost(${r.id})`)).map((r) => ({ ...r })),
      markFinal: async (id) => void calls.push(`final(${id})`),
      markReorged: async (id) => {
        const row = stored.find((r) => r.id === id)!;
        if (row.blockNumber === null) return false;
        row.blockNumber = null;
        row.reorgCount++;
        calls.push(`reorged(${id})`);
        return true;
      },
      markReincluded: async (id, mined) => {
        Object.assign(stored.find((r) => r.id === id)!, { blockNumber: mined.blockNumber, blockHash: mined.blockHash, status: mined.status });
        calls.push(`reincluded(${id},${mined.blockNumber},${mined.status})`);
      },
      markLost: async (id) => void calls.push(`lost(${id})`),
    },
    settlements: {
      recordFinality: async (id, update, event) => {
        calls.push(`finality(${id},${update.finality})`);
        // as the repository does: a changed finality stays, and the row keeps what the merchant was told
        const stored = settlementById(id);
        if (stored.finality !== 'changed' && update.finality) stored.finality = update.finality;
        if (update.merchantPaid !== undefined) stored.merchantPaid = update.merchantPaid;
        const row = { ...stored } as SettlementRow;
        finality.push({ id, update, event: event?.(row) });
        return row;
      },
      markFinalWhereSettled: async () => (calls.push('settlementsFinal'), 1),
      findWithVerification: async (id) => settlementById(id),
      // as the repository does: not final yet, and not told changed
      foreignExecutionsAwaitingFinality: async () =>
        foreign.filter((f) => !calls.includes(`foreignFinal(${f.settlementId})`) && settlementById(f.settlementId).finality !== 'changed').map((f) => ({ ...f })),
      markForeignExecutionFinal: async (id) => void calls.push(`foreignFinal(${id})`),
      moveForeignExecution: async (id, to) => {
        Object.assign(foreign.find((f) => f.settlementId === id)!, to);
        settlementById(id).settlementTxHash = to.txHash;
        calls.push(`foreignMoved(${id},${to.txHash},${to.blockNumber})`);
      },
    },
    batches: { settlementsOf: async () => (batch ?? []).map((b) => b.id) },
    treasury: TREASURY,
    chain,
    outbox: { enqueue: async (eventId) => void calls.push(`enqueue(${eventId.slice(0, 4)})`), row: (event) => new FakeOutbox().row(event) },
    depths: new Map([[CHAIN_ID, DEPTH]]),
    logger: createSilentLogger(),
  });
  return { watcher, calls, finality, stored, chainState, settlement };
}

describe('FinalityWatcher', () => {
  it('watches a mined transaction until its block is FINALITY_DEPTH deep, then marks it and its settlement final, by block hash alone', async () => {
    const h = harness([transferRow()], { head: 103, blocks: new Map([[100, '0xb100']]), receipts: new Map() });
    expect(await h.watcher.run()).toEqual({ watched: 1, final: 0, reorged: 0, changed: 0 });
    h.chainState.head = 104;
    expect(await h.watcher.run()).toEqual({ watched: 1, final: 1, reorged: 0, changed: 0 });
    expect(h.calls).toEqual(['settlementsFinal', 'final(ctx_1)', 'settlementsFinal']);
    expect(h.finality).toEqual([]);
  });

  it('sends a transaction a reorg removed again, notes the reorg once, and the re-inclusion, then waits for depth again', async () => {
    // the chain's block 100 is another one now, and no block holds the transaction
    const h = harness([transferRow()], { head: 101, blocks: new Map([[100, '0xb100-replaced']]), receipts: new Map() });
    // suspected on the first run, acted on when the next run sees the same
    expect(await h.watcher.run()).toMatchObject({ reorged: 0 });
    expect(h.calls.filter((c) => c.startsWith('rebroadcast') || c.startsWith('receipt'))).toEqual([]);
    expect(await h.watcher.run()).toMatchObject({ reorged: 1 });
    expect(await h.watcher.run()).toMatchObject({ reorged: 0, final: 0 });
    expect(h.calls.filter((c) => c.startsWith('rebroadcast'))).toEqual(['rebroadcast(0x02f8raw,0xabc)', 'rebroadcast(0x02f8raw,0xabc)']);
    expect(h.finality).toEqual([
      {
        id: 'stl_1',
        update: { finality: 'reorged', reorg: true, note: { reorg: { purpose: 'transfer', tx_hash: '0xabc', removed_from_block: 100, action: 'broadcast again' } } },
        event: undefined,
      },
    ]);

    h.chainState.receipts.set('0xabc', { blockNumber: 102, blockHash: '0xb102', status: 'confirmed' });
    h.chainState.blocks.set(102, '0xb102');
    h.chainState.head = 103;
    await h.watcher.run();
    expect(h.calls).toContain('reincluded(ctx_1,102,confirmed)');
    const receiptsRead = h.calls.filter((c) => c.startsWith('receipt')).length;
    expect(h.finality[1]).toMatchObject({ update: { finality: 'reorged', note: { reincluded: { block: 102, outcome: 'confirmed' } } }, event: undefined });
    expect(h.calls).not.toContain('final(ctx_1)');
    h.chainState.head = 106;
    expect(await h.watcher.run()).toMatchObject({ final: 1 });
    // back in a block whose hash holds: no receipt read any more
    expect(h.calls.filter((c) => c.startsWith('receipt')).length).toBe(receiptsRead);
  });

  it('when the transfer is mined again but now reverts: finality changed, and a settlement.reorged event', async () => {
    const h = harness([transferRow({ blockNumber: null, blockHash: null, reorgCount: 1 })], {
      head: 110,
      blocks: new Map([[105, '0xb105']]),
      receipts: new Map([['0xabc', { blockNumber: 105, blockHash: '0xb105', status: 'reverted' }]]),
    });
    expect(await h.watcher.run()).toMatchObject({ changed: 1 });
    const change = { purpose: 'transfer', tx_hash: '0xabc', reported: 'confirmed', now: 'reverted', block_before_reorg: null };
    expect(h.finality).toHaveLength(1);
    // the row keeps what the merchant is told now: not paid
    expect(h.finality[0].update).toEqual({ finality: 'changed', note: { outcome_changed: change }, merchantPaid: false });
    expect(h.calls).toContain('enqueue(evt_)');
    expect(h.finality[0].event).toMatchObject({
      eventType: 'settlement.reorged',
      settlementId: 'stl_1',
      url: WEBHOOK_URL,
      payload: { event_type: 'settlement.reorged', status: 'changed', data: { state: 'settled', change, merchant_paid: false, fee_collected: true } },
    });
  });

  it('when the nonce went to another transaction while it was out of the chain: lost, finality changed, event', async () => {
    const h = harness([transferRow()], { head: 101, blocks: new Map([[100, '0xb100-replaced']]), receipts: new Map(), nonceTaken: true });
    expect(await h.watcher.run()).toMatchObject({ reorged: 0, changed: 0 }); // reorg suspected
    expect(await h.watcher.run()).toMatchObject({ reorged: 1, changed: 0 }); // reorg confirmed; nonce taken suspected
    expect(h.calls).not.toContain('lost(ctx_1)');
    expect(await h.watcher.run()).toMatchObject({ changed: 1 });
    expect(h.calls).toContain('lost(ctx_1)');
    expect(h.finality.map((f) => f.update.finality)).toEqual(['reorged', 'changed']);
    expect(h.finality[1].event?.payload).toMatchObject({ data: { change: { now: 'lost', block_before_reorg: 100 } } });
  });

  describe('a lagging endpoint is not a reorg', () => {
    it('a block the endpoint does not have yet (no hash at that height, head below it) is waited for, never reorged', async () => {
      const h = harness([transferRow({ blockNumber: 100 })], { head: 98, blocks: new Map(), receipts: new Map(), nonceTaken: true });
      for (let i = 0; i < 5; i++) expect(await h.watcher.run()).toEqual({ watched: 1, final: 0, reorged: 0, changed: 0 });
      // its head passed the block, but it answers no hash there yet
      h.chainState.head = 104;
      for (let i = 0; i < 3; i++) expect(await h.watcher.run()).toEqual({ watched: 1, final: 0, reorged: 0, changed: 0 });
      expect(h.calls.filter((c) => !c.startsWith('settlementsFinal'))).toEqual([]);
      expect(h.finality).toEqual([]);
      // it caught up: the same block, deep enough
      h.chainState.blocks.set(100, '0xb100');
      expect(await h.watcher.run()).toMatchObject({ final: 1, reorged: 0, changed: 0 });
    });

    it('a differing hash seen once (then the right one again) is never acted on', async () => {
      const h = harness([transferRow()], { head: 102, blocks: new Map([[100, '0xstale-fork']]), receipts: new Map(), nonceTaken: true });
      expect(await h.watcher.run()).toMatchObject({ reorged: 0, changed: 0 });
      h.chainState.blocks.set(100, '0xb100');
      expect(await h.watcher.run()).toMatchObject({ reorged: 0, changed: 0 });
      h.chainState.blocks.set(100, '0xstale-fork');
      expect(await h.watcher.run()).toMatchObject({ reorged: 0, changed: 0 });
      expect(h.calls.filter((c) => c.startsWith('receipt') || c.startsWith('rebroadcast') || c.startsWith('reorged'))).toEqual([]);
    });

    it('a transaction out of the chain is not lost on one "nonce taken": the next run must see it too', async () => {
      const h = harness([transferRow({ blockNumber: null, blockHash: null, reorgCount: 1 })], { head: 110, blocks: new Map(), receipts: new Map(), nonceTaken: true });
      expect(await h.watcher.run()).toMatchObject({ changed: 0 });
      // the lagging endpoint caught up and now knows the re-inclusion
      h.chainState.receipts.set('0xabc', { blockNumber: 108, blockHash: '0xb108', status: 'confirmed' });
      h.chainState.blocks.set(108, '0xb108');
      expect(await h.watcher.run()).toMatchObject({ changed: 0 });
      expect(h.calls).not.toContain('lost(ctx_1)');
      expect(h.calls).toContain('reincluded(ctx_1,108,confirmed)');
      expect(h.finality.map((f) => f.update.finality)).toEqual(['reorged']);
    });
  });

  describe('an executor batch mined again is judged item by item', () => {
    const payers = ['0x1000000000000000000000000000000000000001', '0x2000000000000000000000000000000000000002'];
    const nonce = '0x' + 'ab'.repeat(32);
    const settled = (i: number, fields: Partial<SettlementWithVerification> = {}) =>
      settlementFixture({ id: `stl_${i}`, payer: payers[i], nonce, state: 'settled', merchantPaid: true, feeCollectedAt: new Date(), ...fields }, { webhookUrl: WEBHOOK_URL });
    const settleRow = (fields: Partial<AwaitingFinality> = {}) => transferRow({ id: 'ctx_batch', settlementId: 'bat_1', purpose: 'settle', minedHash: '0xbatch', ...fields });
    // the executor runs as the treasury: its item outcomes are the treasury's own logs
    const outcome = (event: 'Settled' | 'NotSettled', payer: string, reason?: string) => {
      const args = event === 'Settled' ? [payer, nonce] : [payer, nonce, new Interface(['error Error(string)']).encodeErrorResult('Error', [reason])];
      const log = executorInterface.encodeEventLog(event, args);
      return { address: TREASURY, topics: log.topics, data: log.data };
    };
    const usedOrCanceled = (payer: string) => outcome('NotSettled', payer, 'FiatTokenV2: authorization is used or canceled');
    /** the batch was out of the chain after a reorg and is mined again in block 105 with this receipt */
    const reincluded = (batch: SettlementWithVerification[], receipt: Omit<Receipt, 'blockNumber' | 'blockHash'>, chain: Partial<ChainState> = {}) =>
      harness([settleRow({ blockNumber: null, blockHash: null, reorgCount: 1 })], { head: 110, blocks: new Map([[105, '0xb105']]), receipts: new Map([['0xbatch', { blockNumber: 105, blockHash: '0xb105', ...receipt }]]), ...chain }, batch);

    it('a batch that succeeds again while one item now fails (another authorization of its nonce went first): that settlement is changed and told, the other is not', async () => {
      const batch = [settled(0), settled(1)];
      const logs = [outcome('Settled', payers[0]), usedOrCanceled(payers[1])];
      const h = reincluded(batch, { status: 'confirmed', logs });
      expect(await h.watcher.run()).toMatchObject({ changed: 1 });
      const changed = h.finality.filter((f) => f.update.finality === 'changed');
      expect(changed.map((f) => f.id)).toEqual(['stl_1']);
      expect(changed[0].event?.payload).toMatchObject({
        event_type: 'settlement.reorged',
        settlement_id: 'stl_1',
        data: {
          merchant_paid: false,
          fee_collected: false,
          change: {
            purpose: 'settle',
            tx_hash: '0xbatch',
            reported: 'confirmed',
            now: 'confirmed',
            item: { reported: { merchant_paid: true, fee_collected: true }, now: { merchant_paid: false, fee_collected: false, reason: expect.stringContaining('used or canceled') } },
          },
        },
      });
      // the settlement whose item settled again only records the re-inclusion
      expect(h.finality.filter((f) => f.id === 'stl_0').map((f) => f.update.finality)).toEqual(['reorged']);
      // told before the re-inclusion is stored: a crash in between tells again, never not at all
      expect(h.calls.indexOf('finality(stl_1,changed)')).toBeLessThan(h.calls.indexOf('reincluded(ctx_batch,105,confirmed)'));
      // judged once: the next run sees the stored block
      expect(await h.watcher.run()).toMatchObject({ changed: 0 });
    });

    it("an item whose authorization someone else executed to the merchant: paid, but no fee; told so", async () => {
      const batch = [settled(0)];
      const logs = [usedOrCanceled(payers[0])];
      const h = harness(
        [settleRow()],
        {
          head: 110,
          blocks: new Map([[100, '0xb100-replaced'], [106, '0xb106']]),
          receipts: new Map([['0xbatch', { blockNumber: 106, blockHash: '0xb106', status: 'confirmed', logs }]]),
          authorizationUses: new Map([[`${payers[0]}:${nonce}`, { transactionHash: '0xstranger', paidToMerchant: 10n ** 6n }]]),
        },
        batch,
      );
      await h.watcher.run(); // suspected
      expect(await h.watcher.run()).toMatchObject({ changed: 1 });
      expect(h.finality.at(-1)?.event?.payload).toMatchObject({
        data: { merchant_paid: true, fee_collected: false, change: { item: { now: { merchant_paid: true, fee_collected: false, paid_by_tx: '0xstranger' } } } },
      });
    });

    it("a Permit2 item (executor v2) is never judged by the token's EIP-3009 uses: an authorization sharing its nonce's value does not read as its payment", async () => {
      const permit2 = { ...permit2Fixture(), id: 'stl_0', state: 'settled' as const, merchantPaid: true, feeCollectedAt: new Date() };
      const h = harness(
        [settleRow()],
        {
          head: 110,
          blocks: new Map([[100, '0xb100-replaced'], [106, '0xb106']]),
          receipts: new Map([['0xbatch', { blockNumber: 106, blockHash: '0xb106', status: 'confirmed', logs: [usedOrCanceled(payers[0])] }]]),
          authorizationUses: new Map([[`${PAYER}:${permit2.nonce}`, { transactionHash: '0xunrelated3009', paidToMerchant: 10n ** 6n }]]),
        },
        [permit2],
      );
      await h.watcher.run(); // suspected
      expect(await h.watcher.run()).toMatchObject({ changed: 1 });
      expect(h.finality.at(-1)?.event?.payload).toMatchObject({ data: { merchant_paid: false, change: { item: { now: { merchant_paid: false, fee_collected: false } } } } });
    });

    it('a Permit2 item someone else executed through the proxy is judged by its mechanism: paid there (no fee), never "not paid"', async () => {
      const permit2 = { ...permit2Fixture(), id: 'stl_0', state: 'settled' as const, merchantPaid: true, feeCollectedAt: new Date() };
      const chain = new FakeChain();
      permit2NonceSpent(chain);
      const stranger = '0x' + 'dd'.repeat(32);
      chain.mined.set(stranger, { hash: stranger, blockNumber: 105, to: PROXY, data: PERMIT2_SETTLE_DATA, succeeded: true, logs: [{ ...transferLog(PAYER, MERCHANT, AMOUNT), index: 0 }, { ...PROXY_SETTLED, index: 1 }] });
      const h = harness(
        [settleRow()],
        {
          head: 110,
          blocks: new Map([[100, '0xb100-replaced'], [106, '0xb106']]),
          receipts: new Map([['0xbatch', { blockNumber: 106, blockHash: '0xb106', status: 'confirmed', logs: [usedOrCanceled(PAYER)] }]]),
          mechanismChain: chain,
        },
        [permit2],
      );
      await h.watcher.run(); // suspected
      expect(await h.watcher.run()).toMatchObject({ changed: 1 });
      expect(h.finality.at(-1)?.event?.payload).toMatchObject({
        data: { merchant_paid: true, fee_collected: false, change: { item: { now: { merchant_paid: true, fee_collected: false, paid_by_tx: stranger } } } },
      });
    });

    it('an item that failed before and fails again is no change; a batch that now reverts changes only the settlements it had paid', async () => {
      const batch = [settled(0), settled(1, { state: 'failed', merchantPaid: false, feeCollectedAt: null })];
      const h = reincluded(batch, { status: 'reverted' });
      expect(await h.watcher.run()).toMatchObject({ changed: 1 });
      const changed = h.finality.filter((f) => f.update.finality === 'changed');
      expect(changed.map((f) => f.id)).toEqual(['stl_0']);
      expect(changed[0].event?.payload).toMatchObject({ data: { merchant_paid: false, fee_collected: false, change: { now: 'reverted', item: { now: { reason: 'the settle transaction reverted' } } } } });
    });

    it('a batch whose nonce went to another transaction: each settlement it paid is told, before the row is marked lost', async () => {
      const h = harness([settleRow()], { head: 101, blocks: new Map([[100, '0xb100-replaced']]), receipts: new Map(), nonceTaken: true }, [settled(0), settled(1)]);
      for (let i = 0; i < 3; i++) await h.watcher.run();
      expect(h.finality.filter((f) => f.update.finality === 'changed').map((f) => f.id)).toEqual(['stl_0', 'stl_1']);
      expect(h.calls.indexOf('finality(stl_1,changed)')).toBeLessThan(h.calls.indexOf('lost(ctx_batch)'));
      expect(h.finality.at(-1)?.event?.payload).toMatchObject({ data: { merchant_paid: false, fee_collected: false, change: { now: 'lost' } } });
    });
    it('judges nothing while a settlement of the batch has not recorded its outcome yet; then judges it once', async () => {
      const pending = settled(1, { state: 'fee_collected', merchantPaid: false });
      const batch = [settled(0), pending];
      const logs = [outcome('Settled', payers[0]), outcome('Settled', payers[1])];
      const h = reincluded(batch, { status: 'confirmed', logs });
      expect(await h.watcher.run()).toMatchObject({ changed: 0 });
      expect(h.calls.filter((c) => c.startsWith('reincluded') || c.startsWith('finality'))).toEqual([]);
      Object.assign(pending, { state: 'settled', merchantPaid: true });
      expect(await h.watcher.run()).toMatchObject({ changed: 0 });
      expect(h.calls).toContain('reincluded(ctx_batch,105,confirmed)');
      expect(h.finality.map((f) => f.update.finality)).toEqual(['reorged', 'reorged']);
    });

    it('a read that fails part-way tells nobody and stores nothing; the next run judges again and tells once', async () => {
      const batch = [settled(0), settled(1)];
      const h = reincluded(batch, { status: 'reverted' });
      let failures = 2;
      const real = h.chainState.authorizationUses;
      h.chainState.authorizationUses = {
        get: (key: string) => {
          // the second settlement's lookup fails (an endpoint's block-range cap, a rate limit)
          if (key.startsWith(payers[1]) && failures-- > 0) throw new Error('query exceeds max block range');
          return real?.get(key);
        },
      } as Map<string, { transactionHash: string; paidToMerchant: bigint }>;
      expect(await h.watcher.run()).toMatchObject({ changed: 0 });
      expect(await h.watcher.run()).toMatchObject({ changed: 0 });
      expect(h.finality).toEqual([]);
      expect(h.calls).toContain('settlementsFinal');
      expect(await h.watcher.run()).toMatchObject({ changed: 1 });
      expect(h.finality.filter((f) => f.update.finality === 'changed').map((f) => f.id)).toEqual(['stl_0', 'stl_1']);
      expect(await h.watcher.run()).toMatchObject({ changed: 0 });
      expect(h.finality.filter((f) => f.update.finality === 'changed')).toHaveLength(2);
    });

    it('a second reorg is judged against what the merchant was told last, not against the first report', async () => {
      // failed at first (its nonce was used), then paid by the batch mined again, then failing again
      const batch = [settled(0, { state: 'failed', merchantPaid: false, feeCollectedAt: null })];
      const paid = [outcome('Settled', payers[0])];
      const h = reincluded(batch, { status: 'confirmed', logs: paid });
      await h.watcher.run();
      expect(h.finality.at(-1)?.event?.payload).toMatchObject({ data: { merchant_paid: true, fee_collected: true } });
      // another reorg; the batch is mined again where the item fails
      h.chainState.blocks.set(105, '0xb105-replaced');
      h.chainState.receipts.set('0xbatch', { blockNumber: 107, blockHash: '0xb107', status: 'confirmed', logs: [usedOrCanceled(payers[0])] });
      h.chainState.blocks.set(107, '0xb107');
      await h.watcher.run(); // suspected
      await h.watcher.run();
      const told = h.finality.filter((f) => f.update.finality === 'changed');
      expect(told).toHaveLength(2);
      expect(told[1].event?.payload).toMatchObject({ data: { merchant_paid: false, change: { item: { reported: { merchant_paid: true }, now: { merchant_paid: false } } } } });
    });

    it('a payment someone else executed before our batch (failed, told paid, no fee) is no change when mined again the same way', async () => {
      const batch = [settled(0, { state: 'failed', merchantPaid: false, feeCollectedAt: null, errorDetails: { merchant_paid: true, executed_by_third_party: true } })];
      const logs = [usedOrCanceled(payers[0])];
      const h = reincluded(batch, { status: 'confirmed', logs }, { authorizationUses: new Map([[`${payers[0]}:${nonce}`, { transactionHash: '0xstranger', paidToMerchant: 10n ** 6n }]]) });
      expect(await h.watcher.run()).toMatchObject({ changed: 0 });
      expect(h.finality.map((f) => f.update.finality)).toEqual(['reorged']);
    });

    it("a use of the authorization by our own executor (another settlement of the payment) does not count as this one's payment", async () => {
      const batch = [settled(0)];
      const logs = [usedOrCanceled(payers[0])];
      const h = reincluded(batch, { status: 'confirmed', logs }, { authorizationUses: new Map([[`${payers[0]}:${nonce}`, { transactionHash: '0xourotherbatch', paidToMerchant: 10n ** 6n, to: TREASURY }]]) });
      expect(await h.watcher.run()).toMatchObject({ changed: 1 });
      expect(h.finality.at(-1)?.event?.payload).toMatchObject({ data: { merchant_paid: false, fee_collected: false } });
    });
  });
});

describe('a payment another transaction executed (settlement_foreign_executions) is watched as ours are', () => {
  const THEIRS = '0x' + 'ee'.repeat(32);
  const watchRow = (fields: Partial<ForeignExecutionWatch> = {}): ForeignExecutionWatch => ({ settlementId: 'stl_1', txHash: THEIRS, blockNumber: 100, blockHash: '0xb100', ...fields });
  const paidElsewhere = () => settlementFixture({ state: 'settled', merchantPaid: true, feeCollectedAt: new Date(), feeTxHash: '0xfee', settlementTxHash: THEIRS }, { webhookUrl: WEBHOOK_URL });

  function foreignHarness(chainState: ChainState) {
    const h = harness([], chainState, [paidElsewhere()], [watchRow()]);
    return h;
  }

  it('until its block is FINALITY_DEPTH deep; only then is the settlement final', async () => {
    const h = foreignHarness({ head: 103, blocks: new Map([[100, '0xb100']]), receipts: new Map() });
    expect(await h.watcher.run()).toEqual({ watched: 1, final: 0, reorged: 0, changed: 0 });
    h.chainState.head = 104;
    expect(await h.watcher.run()).toEqual({ watched: 1, final: 1, reorged: 0, changed: 0 });
    expect(h.calls).toEqual(['settlementsFinal', 'foreignFinal(stl_1)', 'settlementsFinal']);
    expect(await h.watcher.run()).toEqual({ watched: 0, final: 0, reorged: 0, changed: 0 });
  });

  it('a reorg that removes it, with nothing executing the payment now: the merchant is told, not paid (changed, settlement.reorged)', async () => {
    const h = foreignHarness({ head: 101, blocks: new Map([[100, '0xb100-replaced']]), receipts: new Map() });
    expect(await h.watcher.run()).toMatchObject({ changed: 0 }); // reorg suspected
    expect(await h.watcher.run()).toMatchObject({ changed: 0 }); // reorg seen again; nothing executes it: loss suspected
    expect(await h.watcher.run()).toMatchObject({ changed: 1 });
    const told = h.finality.filter((f) => f.update.finality === 'changed');
    expect(told).toHaveLength(1);
    expect(told[0].update).toMatchObject({ merchantPaid: false });
    expect(told[0].event).toMatchObject({
      eventType: 'settlement.reorged',
      payload: { status: 'changed', data: { merchant_paid: false, fee_collected: true, change: { purpose: 'foreign_execution', tx_hash: THEIRS, now: 'lost', item: { now: { merchant_paid: false } } } } },
    });
    // told once, then no longer watched
    expect(await h.watcher.run()).toEqual({ watched: 0, final: 0, reorged: 0, changed: 0 });
  });

  it('a lagging endpoint (no block at that height yet, or a hash seen differ once) is never a reorg', async () => {
    const h = foreignHarness({ head: 99, blocks: new Map(), receipts: new Map() });
    for (let i = 0; i < 3; i++) expect(await h.watcher.run()).toMatchObject({ reorged: 0, changed: 0 });
    h.chainState.head = 101;
    h.chainState.blocks.set(100, '0xstale');
    expect(await h.watcher.run()).toMatchObject({ reorged: 0, changed: 0 });
    h.chainState.blocks.set(100, '0xb100');
    expect(await h.watcher.run()).toMatchObject({ reorged: 0, changed: 0 });
    expect(h.finality).toEqual([]);
  });

  it('mined again in another block: watched there, the merchant told nothing (still paid)', async () => {
    const h = foreignHarness({
      head: 106,
      blocks: new Map([[100, '0xb100-replaced'], [103, '0xb103']]),
      receipts: new Map([[THEIRS, { blockNumber: 103, blockHash: '0xb103', status: 'confirmed' }]]),
      authorizationUses: new Map([[`${settlementFixture().payer}:${settlementFixture().nonce}`, { transactionHash: THEIRS, paidToMerchant: 10n ** 6n }]]),
    });
    await h.watcher.run();
    expect(await h.watcher.run()).toMatchObject({ reorged: 1, changed: 0 });
    expect(h.calls).toContain(`foreignMoved(stl_1,${THEIRS},103)`);
    expect(h.finality.map((f) => f.update.finality)).toEqual(['reorged']);
    h.chainState.head = 107;
    expect(await h.watcher.run()).toMatchObject({ final: 1 });
  });

  it('a Permit2 payment someone else executed again through the proxy after the reorg is found by its mechanism: watched there, still paid', async () => {
    const permit2Settlement = { ...permit2Fixture(), state: 'settled' as const, merchantPaid: true, feeCollectedAt: new Date(), settlementTxHash: THEIRS };
    const chain = new FakeChain();
    permit2NonceSpent(chain);
    const other = '0x' + 'dd'.repeat(32);
    chain.mined.set(other, { hash: other, blockNumber: 104, to: PROXY, data: PERMIT2_SETTLE_DATA, succeeded: true, logs: [{ ...transferLog(PAYER, MERCHANT, AMOUNT), index: 0 }, { ...PROXY_SETTLED, index: 1 }] });
    const h = harness(
      [],
      { head: 106, blocks: new Map([[100, '0xb100-replaced'], [104, '0xb104']]), receipts: new Map([[other, { blockNumber: 104, blockHash: '0xb104', status: 'confirmed' }]]), mechanismChain: chain },
      [permit2Settlement],
      [watchRow()],
    );
    await h.watcher.run();
    expect(await h.watcher.run()).toMatchObject({ reorged: 1, changed: 0 });
    expect(h.calls).toContain(`foreignMoved(stl_1,${other},104)`);
    expect(h.finality.filter((f) => f.update.finality === 'changed')).toEqual([]);
  });
});
