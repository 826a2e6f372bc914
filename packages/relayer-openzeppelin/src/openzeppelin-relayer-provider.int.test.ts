import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keccak256, parseUnits, Wallet, type JsonRpcProvider } from 'ethers';
import { IdPrefix, newId } from '@facilitator/core';
import { createProvider, fiatTokenInterface, paidBetween } from '@facilitator/evm-chain';
import {
  IdempotencyConflictError,
  LocalKeyTransactionProvider,
  TransactionWouldRevertError,
  UnauthenticatedTransactionError,
  type TransactionOutcome,
} from '@facilitator/evm-sending';
import { ForeignProviderTransactionError } from '@facilitator/db';
import { startDevnet, type Devnet, type DevnetAccount } from '@facilitator/evm-devnet';
import { feeLegRequest, transferLegRequest } from '@facilitator/evm-sending/testing';
import { startOpenZeppelinRelayerServer, type LocalRelayerServer } from '@facilitator/relayer-openzeppelin/testing';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { OpenZeppelinRelayerClient } from './api/relayer-api-client';
import { RelayerRequestRefusedError, RelayerTransactionFailedError, RelayerUnavailableError } from './errors';
import { OpenZeppelinRelayerProvider } from './openzeppelin-relayer-provider';
import type { OpenZeppelinRelayerProviderOptions } from './provider-options';
import type { RelayerWebhookHandler } from './webhook-handler';
import { signRelayerWebhook } from './webhook-signature';

const usdc = (amount: string) => parseUnits(amount, 6);
const API_KEY = 'test-relayer-api-key-0123456789abcdef';
const SIGNING_KEY = 'test-relayer-signing-key-0123456789abcdef';

let devnet: Devnet;
let db: TestDatabase;
let rpc: JsonRpcProvider;
let relayer: LocalRelayerServer;
let receiver: Server;
/** the webhook handler the receiver hands the relayer's notifications to, and what it answered */
let webhookTarget: RelayerWebhookHandler | undefined;
const webhookAnswers: Array<{ status: number; woke: boolean }> = [];

beforeAll(async () => {
  [devnet, db] = await Promise.all([startDevnet({ relayerCount: 2, treasuryAllowance: usdc('1000') }), createTestDatabase()]);
  rpc = createProvider(devnet.rpcUrl, devnet.chainId);
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = webhookTarget?.handle(Buffer.concat(chunks), req.headers) ?? { status: 200 as const, woke: false };
      webhookAnswers.push(answer);
      res.writeHead(answer.status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  relayer = await startOpenZeppelinRelayerServer({
    rpcUrl: devnet.rpcUrl,
    apiKey: API_KEY,
    relayers: [
      { id: 'treasury', privateKey: devnet.accounts.treasury.privateKey },
      { id: 'relayer-0', privateKey: devnet.accounts.relayers[0].privateKey },
    ],
    webhook: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/relayer`, signingKey: SIGNING_KEY },
  });
});

afterAll(async () => {
  await relayer?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  rpc?.destroy();
  await devnet?.stop();
  await db?.drop();
});

afterEach(async () => {
  relayer.faults.release();
  relayer.faults.delayReads(0);
  webhookTarget = undefined;
  await relayer.idle();
});

// ---- helpers -------------------------------------------------------------------------------------

function client(options: { apiKey?: string; requestTimeoutMs?: number } = {}) {
  return new OpenZeppelinRelayerClient({ baseUrl: relayer.url, apiKey: options.apiKey ?? API_KEY, requestTimeoutMs: options.requestTimeoutMs ?? 2_000 });
}

/** Fast polling and a short reconciliation wait, so the file stays quick; each test instance is "a process". */
function newProvider(options: OpenZeppelinRelayerProviderOptions = {}, bindings = relayer.relayers) {
  return new OpenZeppelinRelayerProvider(
    db.pool,
    client(),
    bindings.map((r) => ({ id: r.id, chainId: devnet.chainId, address: r.address })),
    new Map([[devnet.chainId, rpc]]),
    { statusPollIntervalMs: 50, receiptPollIntervalMs: 20, reconcileAfterMs: 300, outcomeTimeoutMs: 15_000, finalGraceMs: 500, ...options },
  );
}

const feeRequest = (settlementId: string, amount?: bigint, merchant?: string) => feeLegRequest(devnet, settlementId, amount, merchant);
const transferRequest = (settlementId: string, value: bigint, sender?: DevnetAccount) => transferLegRequest(devnet, settlementId, value, sender);

const newSettlementId = () => newId(IdPrefix.Settlement);

/** The relayer's transactions carrying this calldata: how many it was ever asked to make. */
const relayerTransactionsOf = (data: string) => relayer.transactions().filter((tx) => tx.data?.toLowerCase() === data.toLowerCase());

function storedRow(settlementId: string, purpose: 'fee' | 'transfer' = 'fee') {
  return db.prisma.chainTransaction.findUnique({ where: { settlementId_purpose: { settlementId, purpose } }, include: { attempts: true } });
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function expectConfirmed(outcome: TransactionOutcome): asserts outcome is Extract<TransactionOutcome, { status: 'confirmed' }> {
  expect(outcome.status).toBe('confirmed');
}

/** A lost answer, as the first instance saw it: retryable, and the relayer may have acted. */
async function expectLostAnswer(submitting: Promise<unknown>): Promise<void> {
  const error = await submitting.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RelayerUnavailableError);
  expect(error).toMatchObject({ retryable: true, maybeReceived: true });
}

// ---- settling through the relayer ------------------------------------------------------------------

describe('OpenZeppelinRelayerProvider settling', () => {
  it("lands a payer's transferWithAuthorization with one relayer transaction, its outcome read from our node", async () => {
    const { payer, merchant } = devnet.accounts;
    const settlementId = newSettlementId();
    const request = await transferRequest(settlementId, usdc('1.5'));
    const before = await devnet.balanceOf(merchant.address);
    const provider = newProvider();

    const sent = await provider.submit(request);
    expect(sent).toMatchObject({ from: devnet.accounts.relayers[0].address.toLowerCase(), hashes: [sent.hash] });
    expect(typeof sent.nonce).toBe('bigint');
    const outcome = await provider.waitForOutcome(sent.id, 1);

    expectConfirmed(outcome);
    expect(outcome.hash).toBe(sent.hash);
    expect(paidBetween(outcome.logs, devnet.token, payer.address, merchant.address)).toBe(usdc('1.5'));
    expect(await devnet.balanceOf(merchant.address)).toBe(before + usdc('1.5'));
    expect(relayerTransactionsOf(request.data)).toHaveLength(1);
    const row = await storedRow(settlementId, 'transfer');
    expect(row).toMatchObject({
      provider: 'openzeppelin-relayer',
      providerTransactionId: relayerTransactionsOf(request.data)[0].id,
      status: 'confirmed',
      minedHash: sent.hash,
      nonce: sent.nonce,
      providerHashes: [sent.hash],
      providerRequestedAt: null,
    });
    // the mined version is stored as its one attempt: the finality watcher resends exactly these bytes after a reorg
    expect(row!.attempts).toHaveLength(1);
    expect(keccak256(row!.attempts[0].rawTransaction)).toBe(sent.hash);
    // a second wait (another process) answers from what was stored, with the logs read again
    expect(await newProvider().waitForOutcome(sent.id, 1)).toEqual(outcome);
  });

  it("collects a merchant's fee (transferFrom by the treasury's relayer)", async () => {
    const { treasury, merchant } = devnet.accounts;
    const settlementId = newSettlementId();
    const [treasuryBefore, merchantBefore] = await Promise.all([devnet.balanceOf(treasury.address), devnet.balanceOf(merchant.address)]);
    const provider = newProvider();

    const sent = await provider.submit(feeRequest(settlementId, 10_000n));
    const outcome = await provider.waitForOutcome(sent.id, 1);

    expectConfirmed(outcome);
    expect(paidBetween(outcome.logs, devnet.token, merchant.address, treasury.address)).toBe(10_000n);
    expect(await devnet.balanceOf(treasury.address)).toBe(treasuryBefore + 10_000n);
    expect(await devnet.balanceOf(merchant.address)).toBe(merchantBefore - 10_000n);
    expect(relayerTransactionsOf(feeRequest(settlementId, 10_000n).data)).toHaveLength(1);
    expect(await storedRow(settlementId)).toMatchObject({ status: 'confirmed', fromAddress: treasury.address.toLowerCase() });
  });

  it('waits for the requested confirmations', async () => {
    const provider = newProvider();
    const sent = await provider.submit(await transferRequest(newSettlementId(), 1n));
    const waiting = provider.waitForOutcome(sent.id, 3);
    let settled = false;
    void waiting.then(() => (settled = true));
    await until(async () => (await rpc.getTransactionReceipt(sent.hash)) !== null, 'the transaction to be mined');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(settled).toBe(false);
    await rpc.send('anvil_mine', ['0x2']);
    expectConfirmed(await waiting);
  });

  it('is idempotent per (settlementId, purpose): submits from any instance return the one relayer transaction', async () => {
    const settlementId = newSettlementId();
    const request = await transferRequest(settlementId, 2n);
    const first = await newProvider().submit(request);
    const again = await newProvider().submit(request);
    const concurrent = await Promise.all([newProvider().submit(request), newProvider().submit(request)]);

    for (const other of [again, ...concurrent]) expect(other).toMatchObject({ id: first.id, hash: first.hash, nonce: first.nonce });
    expect(relayerTransactionsOf(request.data)).toHaveLength(1);
    expect(await newProvider().find(settlementId, 'transfer')).toMatchObject({ id: first.id, hash: first.hash });
    expect(await newProvider().hasAny(settlementId, 'transfer')).toBe(true);
    await expect(newProvider().submit({ ...request, data: feeRequest(settlementId).data })).rejects.toBeInstanceOf(IdempotencyConflictError);
  });

  it('sends one relayer transaction when several instances submit a new key at once', async () => {
    const settlementId = newSettlementId();
    const request = await transferRequest(settlementId, 3n);
    const sent = await Promise.all([newProvider().submit(request), newProvider().submit(request), newProvider().submit(request)]);
    expect(new Set(sent.map((s) => s.hash)).size).toBe(1);
    expect(relayerTransactionsOf(request.data)).toHaveLength(1);
    expectConfirmed(await newProvider().waitForOutcome(sent[0].id, 1));
  });

  it('refuses what would revert before storing or sending anything, with the reason', async () => {
    const settlementId = newSettlementId();
    const error = await newProvider().submit(await transferRequest(settlementId, usdc('1000000'))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionWouldRevertError);
    expect((error as TransactionWouldRevertError).reason).toBe('ERC20: transfer amount exceeds balance');
    expect(await newProvider().hasAny(settlementId, 'transfer')).toBe(false);
    expect(await newProvider().find(settlementId, 'transfer')).toBeNull();
  });

  it('reports an on-chain revert with its reason, and the relayer never got the reverting one twice', async () => {
    // a merchant with 100 USDC and two fees of 60: each fine alone, not both
    const merchant = Wallet.createRandom();
    await devnet.setEthBalance(merchant.address, parseUnits('1', 'ether'));
    await devnet.mint(merchant.address, usdc('100'));
    await devnet.approveTreasury(merchant.privateKey, usdc('1000'));
    const requests = [feeRequest(newSettlementId(), usdc('60'), merchant.address), feeRequest(newSettlementId(), usdc('60'), merchant.address)];
    const provider = newProvider();

    // both are simulated and handed over before the relayer signs either
    relayer.faults.hold();
    const submitting = requests.map((r) => provider.submit(r));
    await until(() => relayerTransactionsOf(requests[0].data).length === 2, 'both transactions on the relayer');
    relayer.faults.release();
    const sent = await Promise.all(submitting);
    const outcomes = await Promise.all(sent.map((s) => provider.waitForOutcome(s.id, 1)));

    expect(outcomes.filter((o) => o.status === 'confirmed')).toHaveLength(1);
    const reverted = outcomes.find((o) => o.status === 'reverted');
    expect(reverted).toMatchObject({ status: 'reverted', reason: 'ERC20: transfer amount exceeds balance' });
    // the relayer reports the reverted one `failed` (its receipt's status), the other `confirmed`
    await until(() => relayerTransactionsOf(requests[0].data).map((tx) => tx.status).sort().join() === 'confirmed,failed', "the relayer's statuses");
    const rows = await Promise.all(requests.map((r) => storedRow(r.settlementId)));
    expect(rows.find((row) => row!.status === 'reverted')).toMatchObject({ minedHash: reverted!.hash, revertReason: 'ERC20: transfer amount exceeds balance' });
  });

  it('reads the network fee against its cap from our node', async () => {
    expect(await newProvider().networkFee(devnet.chainId)).toMatchObject({ maxFeePerGasCap: parseUnits('100', 'gwei'), aboveCap: false });
    expect(await newProvider({ maxFeePerGasCap: 1n }).networkFee(devnet.chainId)).toMatchObject({ maxFeePerGasCap: 1n, aboveCap: true });
  });
});

// ---- crashes and a relayer that fails ----------------------------------------------------------------

describe('OpenZeppelinRelayerProvider after a crash or a relayer fault', () => {
  it('finds the transaction when the answer was lost after the relayer accepted it (the crash window), and sends no second one', async () => {
    const { merchant } = devnet.accounts;
    const settlementId = newSettlementId();
    const request = await transferRequest(settlementId, usdc('0.25'));
    const before = await devnet.balanceOf(merchant.address);

    relayer.faults.dropResponses(1);
    await expectLostAnswer(newProvider().submit(request));
    // the trace the crash left: the row, and the time of a request whose answer never came
    const trace = await storedRow(settlementId, 'transfer');
    expect(trace).toMatchObject({ status: 'allocated', providerTransactionId: null });
    expect(trace!.providerRequestedAt).not.toBeNull();
    expect(await newProvider().find(settlementId, 'transfer')).toBeNull();
    expect(await newProvider().hasAny(settlementId, 'transfer')).toBe(true);
    const [made] = relayerTransactionsOf(request.data);

    // a fresh instance (a restarted worker) resumes the key
    const resumed = newProvider();
    const sent = await resumed.submit(request);
    expectConfirmed(await resumed.waitForOutcome(sent.id, 1));

    expect(relayerTransactionsOf(request.data)).toHaveLength(1);
    expect(await storedRow(settlementId, 'transfer')).toMatchObject({ providerTransactionId: made.id, providerRequestedAt: null, status: 'confirmed' });
    expect(await devnet.balanceOf(merchant.address)).toBe(before + usdc('0.25'));
  });

  it('finishes a lost answer from waitForOutcome alone', async () => {
    const settlementId = newSettlementId();
    const request = await transferRequest(settlementId, 4n);
    relayer.faults.dropResponses(1);
    await expectLostAnswer(newProvider().submit(request));
    const row = await storedRow(settlementId, 'transfer');

    expectConfirmed(await newProvider().waitForOutcome(row!.id, 1));
    expect(relayerTransactionsOf(request.data)).toHaveLength(1);
  });

  it.each([
    ['before the request reached the relayer', 'requested'],
    ['after the relayer accepted, before its id was stored', 'accepted'],
  ] as const)('sends exactly one transaction after a crash %s', async (_when, phase) => {
    const settlementId = newSettlementId();
    const request = await transferRequest(settlementId, 5n);
    const crashing = newProvider({
      onPhase: (reached) => {
        if (reached === phase) throw new Error(`simulated crash after ${phase}`);
      },
    });
    await expect(crashing.submit(request)).rejects.toThrow('simulated crash');
    expect(relayerTransactionsOf(request.data)).toHaveLength(phase === 'requested' ? 0 : 1);

    const sent = await newProvider().submit(request);
    expectConfirmed(await newProvider().waitForOutcome(sent.id, 1));
    expect(relayerTransactionsOf(request.data)).toHaveLength(1);
  });

  it('gives each of two rows with identical calldata (two fee legs of one merchant) one transaction after both answers were lost', async () => {
    const requests = [feeRequest(newSettlementId(), 777n), feeRequest(newSettlementId(), 777n)];
    const already = relayerTransactionsOf(requests[0].data).length;
    for (const request of requests) {
      relayer.faults.dropResponses(1);
      await expectLostAnswer(newProvider().submit(request));
    }
    expect(relayerTransactionsOf(requests[0].data)).toHaveLength(already + 2);

    const sent = await Promise.all(requests.map((r) => newProvider().submit(r)));
    const outcomes = await Promise.all(sent.map((s) => newProvider().waitForOutcome(s.id, 1)));

    expect(outcomes.map((o) => o.status)).toEqual(['confirmed', 'confirmed']);
    expect(relayerTransactionsOf(requests[0].data)).toHaveLength(already + 2);
    const rows = await Promise.all(requests.map((r) => storedRow(r.settlementId)));
    expect(new Set(rows.map((r) => r!.providerTransactionId)).size).toBe(2);
  });

  it('throws a retryable error on a relayer 5xx, and the retry sends nothing twice (whether the relayer had stored it or not)', async () => {
    for (const afterCreate of [true, false]) {
      const settlementId = newSettlementId();
      const request = await transferRequest(settlementId, 6n);
      relayer.faults.failSends(1, { status: 503, afterCreate });
      const error = await newProvider().submit(request).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RelayerUnavailableError);
      expect(error).toMatchObject({ retryable: true, status: 503, maybeReceived: true });
      expect(relayerTransactionsOf(request.data)).toHaveLength(afterCreate ? 1 : 0);

      const sent = await newProvider().submit(request);
      expectConfirmed(await newProvider().waitForOutcome(sent.id, 1));
      expect(relayerTransactionsOf(request.data)).toHaveLength(1);
    }
  });

  it('rides out a relayer too slow to answer: submit fails retryably with the id stored, the outcome is read from our node', async () => {
    const settlementId = newSettlementId();
    const request = await transferRequest(settlementId, 13n);
    relayer.faults.delayReads(3_000); // past the client's 2 s timeout
    const error = await newProvider().submit(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RelayerUnavailableError);
    expect(error).toMatchObject({ retryable: true, maybeReceived: false });
    const [made] = relayerTransactionsOf(request.data);
    expect(await storedRow(settlementId, 'transfer')).toMatchObject({ providerTransactionId: made.id, status: 'signed' });

    relayer.faults.delayReads(0);
    const sent = await newProvider().submit(request);
    // the relayer slow again: the hashes it already reported are enough to see the outcome on our node
    relayer.faults.delayReads(3_000);
    const started = Date.now();
    expectConfirmed(await newProvider().waitForOutcome(sent.id, 1));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(relayerTransactionsOf(request.data)).toHaveLength(1);
  });

  it('refuses without retrying when the relayer refuses the request (unknown relayer id), leaving nothing to reconcile', async () => {
    const settlementId = newSettlementId();
    const request = await transferRequest(settlementId, 7n, devnet.accounts.relayers[1]);
    const unknown = newProvider({}, [{ id: 'no-such-relayer', address: devnet.accounts.relayers[1].address.toLowerCase() }]);
    const error = await unknown.submit(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RelayerRequestRefusedError);
    expect(error).toMatchObject({ retryable: false, status: 404 });
    expect(await storedRow(settlementId, 'transfer')).toMatchObject({ status: 'allocated', providerTransactionId: null, providerRequestedAt: null });
  });

  it('refuses a wrong API key (401) as a refusal', async () => {
    const error = await client({ apiKey: 'wrong' }).getRelayer('treasury').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RelayerRequestRefusedError);
    expect(error).toMatchObject({ status: 401, relayerMessage: 'Unauthorized' });
  });

  it('reports a transaction the relayer gave up before signing as never sent, and never sends it again', async () => {
    const settlementId = newSettlementId();
    const request = await transferRequest(settlementId, 8n);
    relayer.faults.failBeforeSigning(1, 'Transaction in Pending state for over 1 minutes');
    const error = await newProvider().submit(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RelayerTransactionFailedError);
    expect(error).toMatchObject({ retryable: false, nothingMined: true, relayerStatus: 'failed', reason: 'Transaction in Pending state for over 1 minutes' });

    expect(await storedRow(settlementId, 'transfer')).toMatchObject({ status: 'replaced', providerStatus: 'failed' });
    expect(await newProvider().find(settlementId, 'transfer')).toBeNull();
    await expect(newProvider().submit(request)).rejects.toMatchObject({ nothingMined: true });
    expect(relayerTransactionsOf(request.data)).toHaveLength(1);
  });

  it('keeps a local-key row and a relayer row apart: neither provider sends the other one', async () => {
    const settlementId = newSettlementId();
    const request = await transferRequest(settlementId, 9n, devnet.accounts.relayers[1]);
    const local = new LocalKeyTransactionProvider(db.pool, new Map([[devnet.chainId, rpc]]), [devnet.accounts.relayers[1]], { receiptPollIntervalMs: 20 });
    const sent = await local.submit(request);
    await local.waitForOutcome(sent.id, 1);

    await expect(newProvider().submit(request)).rejects.toBeInstanceOf(ForeignProviderTransactionError);
    expect(await newProvider().hasAny(settlementId, 'transfer')).toBe(true);
    const relayed = newSettlementId();
    const relayedRequest = await transferRequest(relayed, 10n);
    await newProvider().submit(relayedRequest);
    await expect(local.submit({ ...relayedRequest, from: devnet.accounts.relayers[1].address })).rejects.toBeInstanceOf(ForeignProviderTransactionError);
    expect(await local.hasAny(relayed, 'transfer')).toBe(true);
  });
});

// ---- the relayer's signed notifications ---------------------------------------------------------------

describe('OpenZeppelinRelayerProvider webhooks', () => {
  /** Polls so slow that only a notification can end the wait for the relayer's signature within the test. */
  const slow = { statusPollIntervalMs: 60_000, receiptPollIntervalMs: 60_000, signWaitMs: 120_000 };

  it("wakes the wait at once on the relayer's signed notification", async () => {
    const provider = newProvider(slow);
    webhookTarget = provider.webhookHandler(SIGNING_KEY);
    relayer.faults.hold();
    const request = await transferRequest(newSettlementId(), 11n);
    const submitting = provider.submit(request);
    await until(() => relayerTransactionsOf(request.data).length === 1, 'the relayer to accept it');
    // the first look after acceptance found it pending: from now on only a notification ends the wait early
    await new Promise((resolve) => setTimeout(resolve, 100));
    const answered = webhookAnswers.length;
    const started = Date.now();
    relayer.faults.release();

    const sent = await submitting;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(webhookAnswers.slice(answered)).toContainEqual({ status: 200, woke: true });
    expect(sent.hash).toBe(relayerTransactionsOf(request.data)[0].hash);
  });

  it('ignores a notification whose signature does not verify (401), and wakes nobody', async () => {
    const provider = newProvider(slow);
    webhookTarget = provider.webhookHandler('not-the-relayers-signing-key-0123456789');
    relayer.faults.hold();
    const request = await transferRequest(newSettlementId(), 12n);
    let done = false;
    const submitting = provider.submit(request).finally(() => (done = true));
    await until(() => relayerTransactionsOf(request.data).length === 1, 'the relayer to accept it');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const answered = webhookAnswers.length;
    relayer.faults.release();

    await until(() => relayer.webhookDeliveries.some((d) => d.notification.payload.id === relayerTransactionsOf(request.data)[0].id), 'the notification');
    await until(() => webhookAnswers.length > answered, 'the answer to it');
    expect(webhookAnswers.slice(answered).every((a) => a.status === 401 && !a.woke)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(done).toBe(false);

    // a notification signed with the right key (here made by hand) ends the wait
    const [made] = relayerTransactionsOf(request.data);
    const body = JSON.stringify({ id: 'n1', event: 'transaction_update', payload: { payload_type: 'transaction', id: made.id }, timestamp: new Date().toISOString() });
    expect(provider.webhookHandler(SIGNING_KEY).handle(body, { 'X-Signature': signRelayerWebhook(body, SIGNING_KEY) })).toEqual({ status: 200, woke: true });
    await submitting;
  });
});

describe('OpenZeppelinRelayerProvider and rows it did not store (issue 40)', () => {
  it("hands the relayer no row a database writer inserted, even one its outcome watcher is asked about: nothing moves", async () => {
    const { treasury, merchant } = devnet.accounts;
    const attacker = Wallet.createRandom().address;
    const data = fiatTokenInterface.encodeFunctionData('transferFrom', [merchant.address, attacker, usdc('100')]).toLowerCase();
    await db.pool.query(
      `INSERT INTO chain_transactions (id, settlement_id, purpose, chain_id, from_address, to_address, data, nonce, gas_limit, status, provider, created_at, updated_at)
       VALUES ('ctx_forged_oz', $1, 'fee', $2, $3, $4, $5, NULL, '100000', 'allocated', 'openzeppelin-relayer', now(), now())`,
      [newSettlementId(), devnet.chainId, treasury.address.toLowerCase(), devnet.token.toLowerCase(), data],
    );

    const error = await newProvider({ outcomeTimeoutMs: 2_000 }).waitForOutcome('ctx_forged_oz', 1).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(UnauthenticatedTransactionError);
    expect(relayerTransactionsOf(data)).toHaveLength(0);
    expect(await devnet.balanceOf(attacker)).toBe(0n);
  });

  it('refuses a stored row rewritten after submit stored it (an unaccepted row resumed), and sends the authentic one', async () => {
    const settlementId = newSettlementId();
    const request = feeRequest(settlementId, 778n);
    // stored, then the process died before the request reached the relayer
    const crashing = newProvider({ onPhase: (reached) => { if (reached === 'stored') throw new Error('simulated crash after stored'); } });
    await expect(crashing.submit(request)).rejects.toThrow('simulated crash');
    const row = (await storedRow(settlementId))!;
    const attacker = Wallet.createRandom().address;
    await db.pool.query(`UPDATE chain_transactions SET gas_limit = '30000000' WHERE id = $1`, [row.id]);

    const error = await newProvider({ outcomeTimeoutMs: 2_000 }).waitForOutcome(row.id, 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthenticatedTransactionError);
    expect(relayerTransactionsOf(request.data)).toHaveLength(0);

    await db.pool.query(`UPDATE chain_transactions SET gas_limit = $2 WHERE id = $1`, [row.id, row.gasLimit]);
    expectConfirmed(await newProvider().waitForOutcome(row.id, 1));
    expect(relayerTransactionsOf(request.data)).toHaveLength(1);
    expect(await devnet.balanceOf(attacker)).toBe(0n);
  });
});
