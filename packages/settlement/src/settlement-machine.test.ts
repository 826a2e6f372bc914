import type { SettlementState } from '@facilitator/db';
import { FundedRelayers, type RelayerFunds } from './funded-relayers';
import { OutcomeWaits } from './outcome-waits';
import { SettlementMachine, UnknownSettlementError, type SettlementTransitionEvent } from './settlement-machine';
import { SettlementWaitingError } from './waiting';
import { SettlementAwaitingChainError } from './awaiting-chain';
import { TRANSITIONS, canTransition } from './states';
import { EVM_STEPS, STEPS_BY_FAMILY } from './steps';
import { UnsentSettlementStop } from './unsent-settlement-stop';
import { PaymentOutcomeUnknownError } from './payment-outcome-unknown';
import { classifySettlementError } from './error-classes';
import type { SettlementWithVerification } from './step';
import {
  CHAIN_ID,
  FakeChain,
  FakeOutbox,
  FakeSettlementStore,
  FakeTransactions,
  FEE,
  MERCHANT,
  NONCE,
  PAYER,
  networkFixture,
  NOW,
  RELAYER_A,
  RELAYER_B,
  reverted,
  settlementFixture,
  TOKEN,
  TREASURY,
  transferFromCalldata,
  ERC6492_SIGNATURE,
  FakeWalletDeployments,
  TEST_ADMISSION,
} from './testing/fakes';
import type { AtomicSettlement } from './atomic/atomic-settlement';
import { executorInterface } from '@facilitator/evm-executor';
import { SettlementWaitReason } from './wait-reasons';

const WEBHOOK_URL = 'https://merchant.example/hooks/x402';
const FEE_TX_HASH = FakeTransactions.hashOf('stl_1', 'fee');
const TRANSFER_TX_HASH = FakeTransactions.hashOf('stl_1', 'transfer');
const STATES = Object.keys(TRANSITIONS) as SettlementState[];

function harness(
  settlements: SettlementWithVerification[] = [settlementFixture({}, { webhookUrl: WEBHOOK_URL })],
  options: {
    relayerFunds?: RelayerFunds;
    atomic?: AtomicSettlement;
    settlementMode?: 'atomic' | 'sequential';
    walletDeployments?: FakeWalletDeployments;
    inSlotWaitMs?: number;
    /** the network's family, when not EVM's */
    family?: string;
  } = {},
) {
  const log: string[] = [];
  const store = new FakeSettlementStore(log);
  for (const s of settlements) store.add(s);
  const chain = new FakeChain(log);
  const transactions = new FakeTransactions(log);
  const outbox = new FakeOutbox(log);
  const events: SettlementTransitionEvent[] = [];
  const waits: string[] = [];
  const outcomes = new OutcomeWaits(transactions, { inSlotWaitMs: options.inSlotWaitMs });
  const machine = new SettlementMachine({
    settlements: store,
    admission: TEST_ADMISSION,
    networks: new Map([[CHAIN_ID, { ...networkFixture(chain), ...(options.family ? { family: options.family as 'evm' } : {}) }]]),
    paths: { pathOf: () => options.settlementMode ?? 'sequential' },
    transactions,
    outcomes,
    chainRecheckMs: 7_000,
    treasury: TREASURY,
    relayers: new FundedRelayers([RELAYER_A, RELAYER_B], options.relayerFunds),
    executorFee: FEE,
    expiryMarginSeconds: 30,
    outbox,
    merchantPause: { afterReverts: 3, windowMs: 600_000 },
    now: () => NOW,
    onTransition: (event) => events.push(event),
    onWaiting: (settlementId, reason) => waits.push(`${settlementId}:${reason}`),
    atomic: options.atomic,
    walletDeployments: options.walletDeployments,
  });
  const path = () => store.transitions.map((t) => `${t.from}->${t.to}`);
  const row = (id = 'stl_1') => store.rows.get(id)!;
  /** the calls that persist or move money, in order */
  const effects = () => log.filter((call) => /^(db\.transition|tx\.submit|tx\.waitForOutcome|outbox\.)/.test(call));
  return { machine, outcomes, store, chain, transactions, outbox, events, waits, log, path, row, effects };
}

describe('SettlementMachine.advance', () => {
  it('walks pending → check_allowance → collect_fee → fee_collected → executing → settled', async () => {
    const h = harness();
    await expect(h.machine.advance('stl_1')).resolves.toBe('settled');
    expect(h.path()).toEqual([
      'pending->check_allowance',
      'check_allowance->collect_fee',
      'collect_fee->fee_collected',
      'fee_collected->executing',
      'executing->settled',
    ]);
    expect(h.row()).toMatchObject({ state: 'settled', feeTxHash: FEE_TX_HASH, settlementTxHash: TRANSFER_TX_HASH, merchantPaid: true, errorCode: null });
    // the fee was reserved against what the chain reported
    expect(h.store.reservations).toEqual([{ merchant: MERCHANT, chainId: CHAIN_ID, tokenAddress: TOKEN, fee: FEE, allowance: 1_000n * FEE, balance: 1_000n * FEE }]);
    expect(h.transactions.sent.map((r) => [r.purpose, r.from])).toEqual([
      ['fee', TREASURY],
      ['transfer', RELAYER_A],
    ]);
    expect(h.events.map((e) => `${e.from}->${e.to}`)).toEqual(h.path());
    expect(h.events[0].settlement.state).toBe('pending');
  });

  it('charges and reserves the fee stored on the row, not its own FEE_AMOUNT (issue 25: a settlement owns its fee)', async () => {
    const rowFee = FEE / 2n;
    const h = harness([settlementFixture({ feeAmount: rowFee.toString() }, { webhookUrl: WEBHOOK_URL })], { settlementMode: 'atomic' });
    await expect(h.machine.advance('stl_1')).resolves.toBe('settled');
    // the executor takes FEE with each item, so this settlement went sequentially, charged its own fee
    expect(h.row()).toMatchObject({ state: 'settled', settlementMode: 'sequential', feeAmount: rowFee.toString() });
    expect(h.store.reservations.map((r) => r.fee)).toEqual([rowFee]);
    const fee = h.transactions.sent.find((r) => r.purpose === 'fee')!;
    expect(fee.data).toBe(transferFromCalldata(MERCHANT, TREASURY, rowFee));
  });

  it('sends nothing of a settlement that a settle request stopped just before the fee was claimed, and ends with its final state', async () => {
    const h = harness();
    const stop = new UnsentSettlementStop(h.store, h.outbox);
    const claim = h.store.claimSend.bind(h.store);
    h.store.claimSend = async (id) => {
      // the settle request's deadline passed while the worker was checking the chain
      expect((await stop.stop(id, 'nothing was sent in time'))?.settlement.state).toBe('failed');
      return claim(id);
    };
    await expect(h.machine.advance('stl_1')).resolves.toBe('failed');
    expect(h.log.filter((call) => call.startsWith('tx.submit'))).toEqual([]);
    expect(h.path()).toEqual(['pending->check_allowance', 'check_allowance->collect_fee', 'collect_fee->failed']);
    expect(h.row()).toMatchObject({ state: 'failed', paymentKey: null, errorDetails: { stopped_by: 'settle_request', fee_status: 'not_collected', merchant_charged: false } });
    // the merchant hears of it like of any failure
    expect(h.outbox.enqueued).toHaveLength(1);
  });

  it('gives back the wallet deployment it reserved when a settle request stopped the settlement before it moved to deploying_wallet', async () => {
    const walletDeployments = new FakeWalletDeployments();
    const h = harness([settlementFixture({}, { webhookUrl: WEBHOOK_URL, signature: ERC6492_SIGNATURE })], { walletDeployments });
    // a settle request's stop lands between the reservation and the transition that would use it
    h.store.beforeNextTransition = () => {
      const row = h.store.rows.get('stl_1')!;
      h.store.rows.set('stl_1', { ...row, state: 'failed' });
    };
    await expect(h.machine.advance('stl_1')).resolves.toBe('failed');
    expect(walletDeployments.reserved).toHaveLength(1);
    expect(walletDeployments.released).toEqual(['stl_1']);
  });

  it('persists each transition before the next step acts, and enqueues the final webhook event after it', async () => {
    const h = harness();
    await h.machine.advance('stl_1');
    expect(h.effects()).toEqual([
      'db.transition(pending->check_allowance)',
      'db.transitionReservingFee(check_allowance->collect_fee)',
      'tx.submit(fee)',
      'tx.waitForOutcome(fee)',
      'db.transition(collect_fee->fee_collected)',
      'tx.submit(transfer)',
      'db.transition(fee_collected->executing)',
      'tx.waitForOutcome(transfer)',
      'db.transition(executing->settled)',
      'outbox.enqueue',
    ]);
    // the pre-flight reads come before their transition, the allowance reads after it
    expect(h.log.indexOf(`chain.estimate(${TOKEN})`)).toBeLessThan(h.log.indexOf('db.transition(pending->check_allowance)'));
    expect(h.log.indexOf('db.transition(pending->check_allowance)')).toBeLessThan(h.log.indexOf(`chain.allowance(${MERCHANT},${TREASURY})`));
    // it carries the moved row forward instead of reading it again
    expect(h.log.filter((call) => call === 'db.findWithVerification')).toHaveLength(1);
  });

  it('stores the final webhook event with the last transition and enqueues exactly that event', async () => {
    const h = harness();
    await h.machine.advance('stl_1');
    expect(h.store.events).toHaveLength(1);
    expect(h.store.events[0]).toMatchObject({ eventType: 'settlement.completed', settlementId: 'stl_1', url: WEBHOOK_URL });
    expect(h.store.events[0].payload).toMatchObject({ status: 'settled', data: { settlement_tx_hash: TRANSFER_TX_HASH, fee_tx_hash: FEE_TX_HASH } });
    expect(h.outbox.enqueued).toEqual([h.store.events[0].id]);
  });

  it('writes no webhook event when the verification has no webhook URL', async () => {
    const h = harness([settlementFixture()]);
    await expect(h.machine.advance('stl_1')).resolves.toBe('settled');
    expect(h.store.events).toEqual([]);
    expect(h.outbox.enqueued).toEqual([]);
  });

  it('still reports the final state when enqueueing the webhook event fails (the sweeper enqueues it later)', async () => {
    const h = harness();
    h.outbox.enqueue = async () => {
      throw new Error('redis down');
    };
    await expect(h.machine.advance('stl_1')).resolves.toBe('settled');
    expect(h.store.events).toHaveLength(1);
  });

  it('fails an already used authorization in one transition, releasing the payment, with no transaction sent', async () => {
    const h = harness();
    h.chain.authorizationUsed = true;
    await expect(h.machine.advance('stl_1')).resolves.toBe('failed');
    expect(h.path()).toEqual(['pending->failed']);
    expect(h.row()).toMatchObject({ state: 'failed', errorCode: 'settlement_failed', paymentKey: null, feeTxHash: null });
    expect(h.transactions.sent).toEqual([]);
    expect(h.store.reservations).toEqual([]);
    expect(h.store.events[0]).toMatchObject({ eventType: 'settlement.rejected' });
  });

  it('waits, sending no fee, when the reservation is refused only for the fees in flight; reserves once they are gone', async () => {
    const h = harness();
    h.chain.allowanceOf = 15_000n;
    h.store.inFlight = 10_000n;
    const error = await h.machine.advance('stl_1').catch((err: unknown) => err);
    expect(error).toMatchObject({ reason: 'merchant_fees_in_flight' });
    expect(h.row()).toMatchObject({ state: 'check_allowance', waitingReason: 'merchant_fees_in_flight', paymentKey: expect.any(String) });
    expect(h.transactions.sent).toEqual([]);
    h.store.inFlight = 0n;
    await expect(h.machine.advance('stl_1')).resolves.toBe('settled');
    expect(h.transactions.sentFor('fee')).toHaveLength(1);
  });

  it('fails with insufficient_allowance when the fee does not fit the allowance even alone, sending no fee', async () => {
    const h = harness();
    h.chain.allowanceOf = 5_000n;
    h.store.inFlight = 10_000n;
    await expect(h.machine.advance('stl_1')).resolves.toBe('failed');
    expect(h.row()).toMatchObject({ errorCode: 'insufficient_allowance', paymentKey: null });
    expect(h.transactions.sent).toEqual([]);
  });

  it('reloads and goes on from the stored state when another worker moved the settlement first', async () => {
    const h = harness();
    // right after pending -> check_allowance, another worker takes the row on to collect_fee: the
    // reservation has room, but the compare-and-set finds the row no longer in check_allowance
    const transition = h.store.transition.bind(h.store);
    h.store.transition = async (request) => {
      const moved = await transition(request);
      if (request.to === 'check_allowance') {
        h.store.beforeNextTransition = () => h.store.rows.set('stl_1', { ...h.row(), state: 'collect_fee' });
      }
      return moved;
    };
    await expect(h.machine.advance('stl_1')).resolves.toBe('settled');
    expect(h.path()).toEqual(['pending->check_allowance', 'collect_fee->fee_collected', 'fee_collected->executing', 'executing->settled']);
    // room to spare: not a refusal, so no failure was even attempted
    expect(h.log).not.toContain('db.transition(check_allowance->failed)');
    expect(h.log.filter((call) => call === 'db.findWithVerification')).toHaveLength(2);
    expect(h.transactions.sentFor('fee')).toHaveLength(1);
  });

  it('fails with fee_collection_failed when the fee reverted, and never sends the transfer', async () => {
    const h = harness();
    h.transactions.outcomes.set('fee', reverted('ERC20: insufficient allowance'));
    await expect(h.machine.advance('stl_1')).resolves.toBe('failed');
    expect(h.path()).toEqual(['pending->check_allowance', 'check_allowance->collect_fee', 'collect_fee->failed']);
    expect(h.row()).toMatchObject({ errorCode: 'fee_collection_failed', feeTxHash: FEE_TX_HASH, paymentKey: null });
    expect(h.transactions.sentFor('transfer')).toEqual([]);
  });

  it('fails after the fee, keeping the fee and the payment, when the transfer reverted', async () => {
    const h = harness();
    h.transactions.outcomes.set('transfer', reverted('FiatTokenV2: invalid signature'));
    await expect(h.machine.advance('stl_1')).resolves.toBe('failed');
    expect(h.path().at(-1)).toBe('executing->failed');
    expect(h.row()).toMatchObject({ errorCode: 'settlement_failed', feeTxHash: FEE_TX_HASH, settlementTxHash: TRANSFER_TX_HASH });
    expect(h.row().paymentKey).not.toBeNull();
    expect(h.row().errorDetails).toMatchObject({ fee_status: 'collected', merchant_charged: true, fee_tx_hash: FEE_TX_HASH });
    expect(h.store.events[0].payload).toMatchObject({ status: 'failed', data: { fee: FEE.toString(), fee_tx_hash: FEE_TX_HASH } });
  });

  it('hands out relayers round robin across settlements', async () => {
    const h = harness([settlementFixture(), settlementFixture({ id: 'stl_2', paymentKey: 'other' })]);
    await h.machine.advance('stl_1');
    await h.machine.advance('stl_2');
    expect(h.transactions.sentFor('transfer').map((r) => [r.settlementId, r.from])).toEqual([
      ['stl_1', RELAYER_A],
      ['stl_2', RELAYER_B],
    ]);
  });

  it('takes a settlement off the attention list when it is run again', async () => {
    const h = harness([settlementFixture({ attentionAt: new Date(), attentionReason: 'executing: transient error' })]);
    await h.machine.advance('stl_1');
    expect(h.log.slice(0, 2)).toEqual(['db.findWithVerification', 'db.clearAttention']);
    const fresh = harness([settlementFixture()]);
    await fresh.machine.advance('stl_1');
    expect(fresh.log).not.toContain('db.clearAttention');
  });

  it('returns a final state without doing anything', async () => {
    const h = harness([settlementFixture({ state: 'settled' })]);
    await expect(h.machine.advance('stl_1')).resolves.toBe('settled');
    expect(h.log).toEqual(['db.findWithVerification']);
  });

  it('rejects an unknown settlement', async () => {
    const h = harness([]);
    await expect(h.machine.advance('stl_missing')).rejects.toBeInstanceOf(UnknownSettlementError);
  });

  it('refuses a settlement on a chain that is not enabled, before touching the chain', async () => {
    const h = harness([settlementFixture({ chainId: 1 })]);
    await expect(h.machine.advance('stl_1')).rejects.toThrow('settlement stl_1 is on chain 1, which is not enabled');
    expect(h.log).toEqual(['db.findWithVerification']);
  });

  it("runs the step table of the network's family, and nothing on a network whose family has none", async () => {
    // a network some family other than EVM opened: the machine has no steps of that family to run there
    const h = harness(undefined, { family: 'svm' });
    await expect(h.machine.advance('stl_1')).rejects.toThrow('settlement stl_1 is on a network of family svm, which this worker does not settle');
    expect(h.log).toEqual(['db.findWithVerification']);
    expect(STEPS_BY_FAMILY.evm).toBe(EVM_STEPS);
  });

  // a database writer stores a row naming another family's network (or another EVM chain) on an enabled chain: a
  // payment key spelt from it is not the honest row's, so it could be a second live settlement of one payment
  it.each(['solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', 'eip155:1', 'eip155:084532', 'not a network'])(
    'settles nothing of a row whose network is not its chain\'s (%s): refused before anything is read or sent',
    async (network) => {
      const h = harness([settlementFixture({ network }, { webhookUrl: WEBHOOK_URL, network })]);
      await expect(h.machine.advance('stl_1')).rejects.toThrow(`settlement stl_1 names network ${JSON.stringify(network)}, but its chain ${CHAIN_ID} is eip155:${CHAIN_ID}: not settled`);
      expect(h.log).toEqual(['db.findWithVerification']);
      expect(h.transactions.sent).toEqual([]);
      expect(h.row().state).toBe('pending');
      // the same row naming its chain's network is settled
      const honest = harness([settlementFixture({ network: `eip155:${CHAIN_ID}` }, { webhookUrl: WEBHOOK_URL })]);
      await expect(honest.machine.advance('stl_1')).resolves.toBe('settled');
      expect(honest.transactions.sent.map((r) => [r.purpose, r.chainId])).toEqual([['fee', CHAIN_ID], ['transfer', CHAIN_ID]]);
    },
  );
});

describe('SettlementMachine.persistChecked', () => {
  const illegal = STATES.flatMap((from) => STATES.filter((to) => !canTransition(from, to)).map((to) => [from, to] as const));

  it('covers every pair outside the transition table', () => {
    expect(illegal).toContainEqual(['pending', 'collect_fee']);
    expect(illegal).toContainEqual(['collect_fee', 'executing']);
    expect(illegal).toContainEqual(['settled', 'failed']);
    expect(illegal.length).toBe(STATES.length ** 2 - Object.values(TRANSITIONS).flat().length);
  });

  it.each(illegal)('refuses %s -> %s without writing anything', async (from, to) => {
    const h = harness([settlementFixture({ state: from })]);
    const settlement = settlementFixture({ state: from });
    await expect(h.machine.persistChecked(settlement, from, { to })).rejects.toThrow(`illegal settlement transition ${from} -> ${to}`);
    expect(h.log).toEqual([]);
    expect(h.row().state).toBe(from);
  });

  it('refuses an illegal transition even when it asks for a fee reservation', async () => {
    const h = harness([settlementFixture()]);
    const request = { merchant: MERCHANT, chainId: CHAIN_ID, tokenAddress: TOKEN, fee: FEE, allowance: FEE, balance: FEE };
    const refusal = { fee: FEE, merchant: MERCHANT, treasury: TREASURY, chainId: CHAIN_ID, tokenAddress: TOKEN, allowance: FEE, balance: FEE, value: FEE, validBefore: 0n, expiryMarginSeconds: 0 };
    const result = { to: 'collect_fee' as const, reserveFee: { request, refusal } };
    await expect(h.machine.persistChecked(settlementFixture(), 'pending', result)).rejects.toThrow('illegal settlement transition pending -> collect_fee');
    expect(h.store.reservations).toEqual([]);
  });

  it('writes a legal transition with its fields and note', async () => {
    const h = harness([settlementFixture({ state: 'fee_collected' })]);
    const moved = await h.machine.persistChecked(settlementFixture({ state: 'fee_collected' }), 'fee_collected', {
      to: 'executing',
      data: { settlementTxHash: '0xabc' },
      note: { tx_hash: '0xabc' },
    });
    expect(moved).toMatchObject({ state: 'executing', settlementTxHash: '0xabc' });
    expect(h.store.transitions).toEqual([{ id: 'stl_1', from: 'fee_collected', to: 'executing', data: { settlementTxHash: '0xabc' }, note: { tx_hash: '0xabc' } }]);
  });

  it('checks every step of a result that passes through other states, and writes nothing when one is illegal', async () => {
    const h = harness([settlementFixture({ state: 'collect_fee' })]);
    const result = { to: 'settled' as const, through: [{ state: 'executing' as const }] };
    await expect(h.machine.persistChecked(settlementFixture({ state: 'collect_fee' }), 'collect_fee', result)).rejects.toThrow('illegal settlement transition collect_fee -> executing');
    expect(h.store.transitions).toEqual([]);
    expect(h.row().state).toBe('collect_fee');
  });

  it('returns null, writing nothing, when the row is no longer in the state it was read in', async () => {
    const h = harness([settlementFixture({ state: 'executing' })]);
    await expect(h.machine.persistChecked(settlementFixture({ state: 'fee_collected' }), 'fee_collected', { to: 'executing' })).resolves.toBeNull();
    expect(h.store.transitions).toEqual([]);
    expect(h.events).toEqual([]);
  });
});

describe('SettlementMachine.advance on the atomic path', () => {
  it('fixes the path on entering collect_fee and walks every state on one transaction, sending nothing else', async () => {
    const settledLog = (() => {
      const encoded = executorInterface.encodeEventLog(executorInterface.getEvent('Settled')!, [PAYER, NONCE]);
      return { address: TREASURY, topics: encoded.topics, data: encoded.data };
    })();
    const placed: string[] = [];
    const atomic: AtomicSettlement = {
      batchOf: async () => null,
      place: async (request) => {
        placed.push(request.settlementId);
        return { id: 'bat_1', chainId: CHAIN_ID, relayer: RELAYER_A, to: TREASURY, data: '0x', gasCap: 1n, itemCount: 1 };
      },
      outcome: async () => ({ status: 'confirmed', hash: '0xfeed', blockNumber: 9, logs: [settledLog] }),
    };
    const h = harness(undefined, { atomic, settlementMode: 'atomic' });
    await expect(h.machine.advance('stl_1')).resolves.toBe('settled');
    expect(h.path()).toEqual(['pending->check_allowance', 'check_allowance->collect_fee', 'collect_fee->fee_collected', 'fee_collected->executing', 'executing->settled']);
    // the item's outcome is the fee's and the payment's: the last three steps are one write, each told as a transition
    expect(h.log.filter((line) => line.startsWith('db.transition'))).toEqual([
      'db.transition(pending->check_allowance)',
      'db.transitionReservingFee(check_allowance->collect_fee)',
      'db.transition(collect_fee->fee_collected->executing->settled)',
    ]);
    expect(h.events.map((e) => `${e.from}->${e.to}`).slice(-3)).toEqual(['collect_fee->fee_collected', 'fee_collected->executing', 'executing->settled']);
    // the payer's code is read once for the run: the pre-flight's gas cap and the item's gas ask the same
    expect(h.log.filter((line) => line.startsWith('chain.hasCode('))).toEqual([`chain.hasCode(${PAYER})`]);
    expect(h.row()).toMatchObject({ settlementMode: 'atomic', feeTxHash: '0xfeed', settlementTxHash: '0xfeed', merchantPaid: true });
    expect(placed).toEqual(['stl_1']);
    expect(h.transactions.sent).toEqual([]);
  });
});

describe('SettlementMachine.giveUp', () => {
  const boom = new Error('boom');

  it.each(['pending', 'deploying_wallet', 'check_allowance'] as const)('fails a settlement given up in %s: nothing was sent', async (state) => {
    const h = harness([settlementFixture({ state })]);
    await expect(h.machine.giveUp('stl_1', boom, 'permanent')).resolves.toBe('failed');
    expect(h.path()).toEqual([`${state}->failed`]);
    expect(h.row()).toMatchObject({ errorCode: 'settlement_failed', errorMessage: 'settlement failed: permanent error: boom', paymentKey: null });
    expect(h.store.attention.size).toBe(0);
  });

  it('fails a settlement given up in collect_fee when no fee transaction exists', async () => {
    const h = harness([settlementFixture({ state: 'collect_fee' })]);
    await expect(h.machine.giveUp('stl_1', boom, 'transient')).resolves.toBe('failed');
    expect(h.row().errorDetails).toMatchObject({ reason: 'transient error: boom', fee_status: 'not_collected' });
  });

  it.each([
    ['a fee that was sent', 'collect_fee', 'fee', false],
    ['a fee nonce that was stored but never signed', 'collect_fee', 'fee', true],
    ['a transfer that was sent', 'fee_collected', 'transfer', false],
  ] as const)('parks a settlement with %s: its money state is open', async (_label, state, purpose, unsigned) => {
    const h = harness([settlementFixture({ state })]);
    if (unsigned) h.transactions.unsigned.add(`stl_1:${purpose}`);
    else h.transactions.seed('stl_1', purpose);
    await expect(h.machine.giveUp('stl_1', boom, 'transient')).resolves.toBe('parked');
    expect(h.store.transitions).toEqual([]);
    expect(h.store.attention.get('stl_1')).toBe(`${state}: transient error: boom`);
    expect(h.row().state).toBe(state);
  });

  it('parks a settlement given up while executing', async () => {
    const h = harness([settlementFixture({ state: 'executing', feeTxHash: FEE_TX_HASH })]);
    await expect(h.machine.giveUp('stl_1', boom, 'permanent')).resolves.toBe('parked');
    expect(h.store.attention.get('stl_1')).toBe('executing: permanent error: boom');
  });

  it('fails after the fee, keeping the fee and the payment, when given up in fee_collected before any transfer', async () => {
    const h = harness([settlementFixture({ state: 'fee_collected', feeTxHash: FEE_TX_HASH })]);
    await expect(h.machine.giveUp('stl_1', boom, 'permanent')).resolves.toBe('failed');
    expect(h.row().paymentKey).not.toBeNull();
    expect(h.row().errorDetails).toMatchObject({ fee_status: 'collected', fee_amount: FEE.toString(), fee_tx_hash: FEE_TX_HASH, customer_charged: false });
  });

  it('parks, whatever its state, a settlement whose payment the chain shows spent without saying whether that paid the merchant', async () => {
    // in fee_collected before any transfer of ours, any other error ends it failed with the fee kept
    const h = harness([settlementFixture({ state: 'fee_collected', feeTxHash: FEE_TX_HASH })]);
    const unknown = new PaymentOutcomeUnknownError('stl_1', 'a contract reached the proxy');
    expect(classifySettlementError(unknown)).toBe('permanent');
    await expect(h.machine.giveUp('stl_1', unknown, 'permanent')).resolves.toBe('parked');
    expect(h.store.transitions).toEqual([]);
    expect(h.store.attention.get('stl_1')).toContain('whether its payment paid the merchant is unknown: a contract reached the proxy');
    expect(h.row().state).toBe('fee_collected');
  });

  describe('on the atomic path', () => {
    const batch = { id: 'bat_1', chainId: CHAIN_ID, relayer: RELAYER_A, to: TREASURY, data: '0x', gasCap: 1n, itemCount: 2 };
    const atomicWith = (stored: typeof batch | null): AtomicSettlement => ({
      batchOf: async () => stored,
      place: async () => batch,
      outcome: async () => ({ status: 'confirmed', hash: '0x', blockNumber: 1, logs: [] }),
    });

    it('fails a settlement never placed in a batch: nothing was sent', async () => {
      const h = harness([settlementFixture({ state: 'collect_fee', settlementMode: 'atomic' })], { atomic: atomicWith(null) });
      await expect(h.machine.giveUp('stl_1', boom, 'transient')).resolves.toBe('failed');
      expect(h.row().errorDetails).toMatchObject({ fee_status: 'not_collected', merchant_charged: false });
    });

    it.each([
      ['sent', false],
      ['stored but never signed', true],
    ] as const)(
      'parks a settlement fixed atomic whose fee went on sequentially (%s): the row still says atomic, the fee may be mined',
      async (_label, unsigned) => {
        // the network left the atomic path, or a worker whose executor takes another fee charged the row's fee
        // sequentially; the row becomes sequential only with its next transition (found by review: it ended
        // "failed, nothing charged" while its fee transaction could still be mined)
        const h = harness([settlementFixture({ state: 'collect_fee', settlementMode: 'atomic' })], { atomic: atomicWith(null) });
        if (unsigned) h.transactions.unsigned.add('stl_1:fee');
        else h.transactions.seed('stl_1', 'fee');
        await expect(h.machine.giveUp('stl_1', boom, 'permanent')).resolves.toBe('parked');
        expect(h.store.transitions).toEqual([]);
        expect(h.store.attention.get('stl_1')).toBe('collect_fee: permanent error: boom');
      },
    );

    it('parks a settlement whose batch is stored: another settlement of the batch may still send it', async () => {
      const h = harness([settlementFixture({ state: 'collect_fee', settlementMode: 'atomic' })], { atomic: atomicWith(batch) });
      await expect(h.machine.giveUp('stl_1', boom, 'transient')).resolves.toBe('parked');
      expect(h.store.transitions).toEqual([]);
    });

    it.each(['fee_collected', 'executing'] as const)('parks a settlement given up in %s: its fee and transfer happened together', async (state) => {
      const h = harness([settlementFixture({ state, settlementMode: 'atomic', feeTxHash: FEE_TX_HASH })], { atomic: atomicWith(batch) });
      await expect(h.machine.giveUp('stl_1', boom, 'permanent')).resolves.toBe('parked');
      expect(h.store.transitions).toEqual([]);
    });
  });

  it('leaves a final settlement alone', async () => {
    const h = harness([settlementFixture({ state: 'settled' })]);
    await expect(h.machine.giveUp('stl_1', boom, 'permanent')).resolves.toBe('settled');
    expect(h.log).toEqual(['db.findWithVerification']);
  });

  it('keeps the recorded reason to 500 characters', async () => {
    const h = harness([settlementFixture({ state: 'executing' })]);
    await h.machine.giveUp('stl_1', new Error('x'.repeat(2000)), 'permanent');
    expect(h.store.attention.get('stl_1')).toBe(`executing: permanent error: ${'x'.repeat(500 - 'permanent error: '.length)}`);
  });
});

describe('SettlementMachine: a sent transaction awaited outside the job slot', () => {
  /** an outcome held back until `mine()`: a block that has not come yet */
  function blockToCome() {
    let mine!: () => void;
    const mined = new Promise<void>((resolve) => (mine = resolve));
    return { mine, outcome: async (tx: { hash: string }) => (await mined, { status: 'confirmed' as const, hash: tx.hash, blockNumber: 101, logs: [] }) };
  }

  it('ends the run with SettlementAwaitingChainError while the fee is unmined, records nothing, and moves on once it is mined', async () => {
    const h = harness(undefined, { inSlotWaitMs: 5 });
    const block = blockToCome();
    h.transactions.outcomes.set('fee', block.outcome);
    const error = await h.machine.advance('stl_1').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SettlementAwaitingChainError);
    const awaiting = error as SettlementAwaitingChainError;
    expect(awaiting).toMatchObject({ settlementId: 'stl_1', retryAfterMs: 7_000 });
    expect(awaiting.transactionId).toBe(h.transactions.waits[0].id);
    // the settlement stays where it was, with no wait recorded: only the job is delayed
    expect(h.row()).toMatchObject({ state: 'collect_fee', waitingReason: null });
    expect(h.waits).toEqual([]);
    expect(h.outcomes.awaited).toBe(1);

    // a run before the block comes sends nothing again and starts no second wait
    await expect(h.machine.advance('stl_1')).rejects.toBeInstanceOf(SettlementAwaitingChainError);
    expect(h.transactions.sentFor('fee')).toHaveLength(1);
    expect(h.transactions.waits).toHaveLength(1);

    let known = false;
    void awaiting.known.then(() => (known = true));
    block.mine();
    await awaiting.known;
    expect(known).toBe(true);
    expect(h.outcomes.awaited).toBe(0);
    await expect(h.machine.advance('stl_1')).resolves.toBe('settled');
    expect(h.path()).toEqual(['pending->check_allowance', 'check_allowance->collect_fee', 'collect_fee->fee_collected', 'fee_collected->executing', 'executing->settled']);
    expect(h.transactions.sent.map((r) => r.purpose)).toEqual(['fee', 'transfer']);
    expect(h.transactions.waits.map((w) => w.id)).toEqual([awaiting.transactionId, h.transactions.waits[1].id]);
  });

  it('gives an error that ended the background wait to the next run, which retries it with a fresh wait', async () => {
    const h = harness(undefined, { inSlotWaitMs: 5 });
    let fail!: () => void;
    const failing = new Promise<void>((resolve) => (fail = resolve));
    let attempt = 0;
    h.transactions.outcomes.set('fee', async (tx) => {
      attempt++;
      if (attempt === 1) {
        await failing;
        throw new Error('rpc down');
      }
      return { status: 'confirmed', hash: tx.hash, blockNumber: 101, logs: [] };
    });
    const first = await h.machine.advance('stl_1').catch((err: unknown) => err);
    expect(first).toBeInstanceOf(SettlementAwaitingChainError);
    fail();
    await (first as SettlementAwaitingChainError).known;
    // the run it wakes gets the error (its job counts an attempt), the one after waits anew and moves on
    await expect(h.machine.advance('stl_1')).rejects.toThrow('rpc down');
    await expect(h.machine.advance('stl_1')).resolves.toBe('settled');
    expect(h.transactions.sentFor('fee')).toHaveLength(1);
    expect(h.transactions.waits.filter((w) => w.id === (first as SettlementAwaitingChainError).transactionId)).toHaveLength(2);
  });
});

describe('SettlementMachine: waiting for the chain', () => {
  const SPIKE = { baseFeePerGas: 150_000_000_000n, maxFeePerGasCap: 100_000_000_000n, aboveCap: true };

  it('records the wait on the settlement and ends the run with SettlementWaitingError; the next run goes on and clears it', async () => {
    const h = harness();
    h.transactions.fee = SPIKE;
    const error = await h.machine.advance('stl_1').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SettlementWaitingError);
    expect(error).toMatchObject({ settlementId: 'stl_1', reason: SettlementWaitReason.GasAboveCap, retryAfterMs: 2_000 });
    expect(h.row()).toMatchObject({ state: 'collect_fee', waitingReason: 'gas_price_above_cap', waitingDetail: { base_fee_per_gas: '150000000000', max_fee_per_gas_cap: '100000000000' } });
    expect(h.row().waitingSince).toBeInstanceOf(Date);
    expect(h.waits).toEqual(['stl_1:gas_price_above_cap']);
    expect(h.transactions.sent).toEqual([]);

    h.transactions.fee = { ...SPIKE, baseFeePerGas: 1n, aboveCap: false };
    await expect(h.machine.advance('stl_1')).resolves.toBe('settled');
    expect(h.row()).toMatchObject({ state: 'settled', waitingReason: null, waitingSince: null, waitingDetail: null });
    expect(h.transactions.sent.map((r) => r.purpose)).toEqual(['fee', 'transfer']);
  });

  it('skips a relayer under its minimum balance, and reports each reading', async () => {
    const readings: string[] = [];
    const funds: RelayerFunds = {
      balanceOf: async (_chainId, relayer) => (relayer === RELAYER_A ? 1n : 10n ** 18n),
      minimum: () => 10n ** 15n,
      onReading: (_chainId, relayer, dry) => readings.push(`${relayer}:${dry ? 'dry' : 'ok'}`),
    };
    const h = harness([settlementFixture({}, {}), settlementFixture({ id: 'stl_2', paymentKey: 'k2', nonce: '0x' + '02'.repeat(32) }, {})], { relayerFunds: funds });
    await h.machine.advance('stl_1');
    await h.machine.advance('stl_2');
    expect(h.transactions.sentFor('transfer').map((r) => r.from)).toEqual([RELAYER_B, RELAYER_B]);
    // per settlement: before the fee, is any relayer funded (A dry, B ok); for the transfer, the turn (A dry, B ok)
    expect(readings).toEqual(Array(4).fill([`${RELAYER_A}:dry`, `${RELAYER_B}:ok`]).flat());
  });

  it('waits with no_funded_relayer before the fee when every relayer is dry: the merchant is not charged ahead of the wait', async () => {
    const funds: RelayerFunds = { balanceOf: async () => 0n, minimum: () => 1n };
    const h = harness(undefined, { relayerFunds: funds });
    await expect(h.machine.advance('stl_1')).rejects.toMatchObject({ reason: SettlementWaitReason.NoFundedRelayer, retryAfterMs: 5_000 });
    expect(h.row()).toMatchObject({ state: 'collect_fee', waitingReason: 'no_funded_relayer' });
    expect(h.transactions.sent).toEqual([]);
  });

  it('waits with no_funded_relayer after the fee when the relayers ran dry in between', async () => {
    let balance = 10n ** 18n;
    const funds: RelayerFunds = { balanceOf: async () => balance, minimum: () => 1n };
    const h = harness(undefined, { relayerFunds: funds });
    h.transactions.onMined.set('fee', () => {
      balance = 0n;
    });
    await expect(h.machine.advance('stl_1')).rejects.toMatchObject({ reason: SettlementWaitReason.NoFundedRelayer });
    expect(h.row()).toMatchObject({ state: 'fee_collected', waitingReason: 'no_funded_relayer' });
    expect(h.transactions.sent.map((r) => r.purpose)).toEqual(['fee']);
  });
});
