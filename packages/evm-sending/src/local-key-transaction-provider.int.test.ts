import { Transaction, Wallet, parseUnits, toQuantity, type JsonRpcProvider } from 'ethers';
import { createPgPool, type Pool } from '@facilitator/db';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { startDevnet, type Devnet, type DevnetAccount } from '@facilitator/evm-devnet';
import type { TransferAuthorization } from '@facilitator/core';
import { createProvider, fiatTokenInterface, classifyNodeError } from '@facilitator/evm-chain';
import { NonceConsumedError, RpcUnavailableError, TransactionWouldRevertError } from './errors';
import { LocalKeyTransactionProvider } from './local-key-transaction-provider';
import type { LocalKeyTransactionProviderOptions, SendPhase } from './sending-options';
import type { TransactionOutcome, TransactionRequest } from './transaction-provider';
import { feeLegRequest, insertDevnetSettlement, transferLegRequest, transferLegRequestFor } from './testing';
import { setTimeout as sleep } from 'node:timers/promises';

const usdc = (amount: string) => parseUnits(amount, 6);
const gwei = (amount: string) => parseUnits(amount, 'gwei');

let devnet: Devnet;
let db: TestDatabase;
let rpc: JsonRpcProvider;
const extraPools: Pool[] = [];
const extraRpcs: JsonRpcProvider[] = [];

beforeAll(async () => {
  [devnet, db] = await Promise.all([
    startDevnet({ relayerCount: 2, treasuryAllowance: usdc('1000') }),
    createTestDatabase(),
  ]);
  rpc = createProvider(devnet.rpcUrl, devnet.chainId);
});

afterAll(async () => {
  rpc?.destroy();
  for (const provider of extraRpcs) provider.destroy();
  await Promise.all(extraPools.map((pool) => pool.end()));
  await devnet?.stop();
  await db?.drop();
});

// ---- helpers -------------------------------------------------------------------------------------

function keys(): DevnetAccount[] {
  return [devnet.accounts.treasury, ...devnet.accounts.relayers];
}

/** Fast polling so the file stays quick; the defaults are exercised by the latency test. */
function newProvider(options: LocalKeyTransactionProviderOptions = {}, pool = db.pool, chainRpc = rpc) {
  return new LocalKeyTransactionProvider(pool, new Map([[devnet.chainId, chainRpc]]), keys(), {
    receiptPollIntervalMs: 20,
    rebroadcastIntervalMs: 100,
    replaceAfterMs: 30_000,
    outcomeTimeoutMs: 15_000,
    ...options,
  });
}

/** A settlement row for the chain_transactions foreign key (and its verification). */
const newSettlement = () => insertDevnetSettlement(db.pool, devnet);

const feeRequest = (settlementId: string, amount?: bigint, merchant?: string) => feeLegRequest(devnet, settlementId, amount, merchant);
const transferRequest = (settlementId: string, value: bigint, relayer?: DevnetAccount) => transferLegRequest(devnet, settlementId, value, relayer);
const transferRequestFor = (settlementId: string, a: TransferAuthorization, signature: string, relayer?: DevnetAccount) => transferLegRequestFor(devnet, settlementId, a, signature, relayer);

function storedRow(settlementId: string, purpose: 'fee' | 'transfer' = 'fee') {
  return db.prisma.chainTransaction.findUnique({
    where: { settlementId_purpose: { settlementId, purpose } },
    include: { attempts: { orderBy: { createdAt: 'asc' } } },
  });
}

async function nextNonceInTable(address: string): Promise<bigint | undefined> {
  const row = await db.prisma.signerNonce.findUnique({ where: { chainId_address: { chainId: devnet.chainId, address: address.toLowerCase() } } });
  return row?.nextNonce;
}

function chainNonce(address: string, tag: 'latest' | 'pending' = 'latest'): Promise<number> {
  return rpc.getTransactionCount(address, tag);
}

/** A logger that keeps what it was told, to check which path the provider took. */
function recordingLogger() {
  const lines: Array<{ level: string; message: string; meta?: Record<string, unknown> }> = [];
  const at = (level: string) => (message: string, meta?: Record<string, unknown>) => lines.push({ level, message, meta });
  return { logger: { info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

function crashAt(phase: SendPhase): LocalKeyTransactionProviderOptions['onPhase'] {
  return (reached) => {
    if (reached === phase) throw new Error(`simulated crash after ${phase}`);
  };
}

async function withAutomineOff<T>(work: () => Promise<T>): Promise<T> {
  await rpc.send('evm_setAutomine', [false]);
  try {
    return await work();
  } finally {
    await rpc.send('evm_setAutomine', [true]);
  }
}

/**
 * Blocks every second, as on a real network, instead of one per transaction: with many transactions of one
 * key arriving out of nonce order, anvil's automine can leave one that became ready unmined until the next
 * transaction arrives (foundry-rs/foundry#10122; seen once in CI, a transaction "not mined within 15 s").
 */
async function withIntervalMining<T>(work: () => Promise<T>): Promise<T> {
  await rpc.send('evm_setIntervalMining', [1]);
  try {
    return await work();
  } finally {
    await rpc.send('evm_setAutomine', [true]);
  }
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Waits for a second signed version of a transaction to be stored and to reach the node's pool. */
async function replacementOf(transactionId: string) {
  const attempts = () => db.prisma.chainTransactionAttempt.findMany({ where: { transactionId }, orderBy: { createdAt: 'asc' } });
  await until(async () => (await attempts()).length >= 2, 'a replacement');
  const [first, replacement] = await attempts();
  expect(BigInt(replacement.maxFeePerGas)).toBeGreaterThanOrEqual((BigInt(first.maxFeePerGas) * 1125n) / 1000n);
  expect(BigInt(replacement.maxPriorityFeePerGas)).toBeGreaterThanOrEqual((BigInt(first.maxPriorityFeePerGas) * 1125n) / 1000n);
  await until(() => nodeKnows(replacement.hash), 'the replacement to reach the pool');
  return replacement;
}

async function expectReplacementMined(sent: { id: string; nonce: bigint; hash: string }, replacementHash: string) {
  expect(BigInt((await rpc.getTransaction(replacementHash))!.nonce)).toBe(sent.nonce);
  const row = await db.prisma.chainTransaction.findUnique({ where: { id: sent.id } });
  expect(row).toMatchObject({ status: 'confirmed', minedHash: replacementHash });
  expect((await newProvider().find(row!.settlementId, 'fee'))!.hashes).toEqual([sent.hash, replacementHash]);
}

const nodeKnows = async (hash: string) => (await rpc.send('eth_getTransactionByHash', [hash])) !== null;

function expectConfirmed(outcome: TransactionOutcome): asserts outcome is Extract<TransactionOutcome, { status: 'confirmed' }> {
  expect(outcome.status).toBe('confirmed');
}

// ---- sending ---------------------------------------------------------------------------------------

describe('LocalKeyTransactionProvider', () => {
  it('refuses to send from a key it does not hold', async () => {
    const provider = newProvider();
    const request = { ...feeRequest(await newSettlement()), from: devnet.accounts.payer.address };
    await expect(provider.submit(request)).rejects.toThrow(/no signing key/);
  });

  it('lands a USDC transferWithAuthorization and records the outcome', async () => {
    const provider = newProvider();
    const settlementId = await newSettlement();
    const { payer, merchant, relayers } = devnet.accounts;
    const before = await devnet.balanceOf(merchant.address);

    const sent = await provider.submit(await transferRequest(settlementId, usdc('1.5')));
    const outcome = await provider.waitForOutcome(sent.id, 1);

    expectConfirmed(outcome);
    expect(outcome.hash).toBe(sent.hash);
    expect(await devnet.balanceOf(merchant.address)).toBe(before + usdc('1.5'));
    const transfer = outcome.logs.map((log) => fiatTokenInterface.parseLog(log)).find((log) => log?.name === 'Transfer');
    expect([transfer?.args[0], transfer?.args[1], transfer?.args[2]]).toEqual([payer.address, merchant.address, usdc('1.5')]);

    const row = await storedRow(settlementId, 'transfer');
    expect(row).toMatchObject({ status: 'confirmed', minedHash: sent.hash, blockNumber: BigInt(outcome.blockNumber), fromAddress: relayers[0].address.toLowerCase() });
    expect(row!.attempts).toHaveLength(1);
    expect(row!.attempts[0].broadcastAt).not.toBeNull();
    expect(await nextNonceInTable(relayers[0].address)).toBe(sent.nonce + 1n);
    expect(BigInt(row!.gasLimit)).toBeGreaterThan(70_000n);
  });

  it('waits for the requested confirmations', async () => {
    const provider = newProvider();
    const sent = await provider.submit(feeRequest(await newSettlement()));
    let settled = false;
    const waiting = provider.waitForOutcome(sent.id, 3).then((outcome) => ((settled = true), outcome));
    await sleep(150);
    expect(settled).toBe(false);
    await rpc.send('anvil_mine', [toQuantity(2)]);
    const outcome = await waiting;
    expect(outcome.status).toBe('confirmed');
    expect((await rpc.getBlockNumber()) - outcome.blockNumber + 1).toBeGreaterThanOrEqual(3);
  });

  it('is idempotent per (settlementId, purpose): a second submit returns the stored transaction', async () => {
    const provider = newProvider();
    const settlementId = await newSettlement();
    const pendingBefore = await chainNonce(devnet.accounts.treasury.address, 'pending');

    const first = await provider.submit(feeRequest(settlementId));
    await provider.waitForOutcome(first.id, 1);
    const second = await provider.submit(feeRequest(settlementId)); // mined by now: "nonce too low" leads to its receipt
    const third = await newProvider().submit(feeRequest(settlementId)); // another instance, i.e. another process

    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(await provider.find(settlementId, 'fee')).toEqual(first);
    expect(await chainNonce(devnet.accounts.treasury.address)).toBe(pendingBefore + 1);
    expect((await storedRow(settlementId))!.attempts).toHaveLength(1);
  });

  it('returns the stored transaction when a retry picks another relayer, and refuses different calldata', async () => {
    const provider = newProvider();
    const settlementId = await newSettlement();
    const request = await transferRequest(settlementId, usdc('0.1'), devnet.accounts.relayers[0]);
    const first = await provider.submit(request);

    const retried = await provider.submit({ ...request, from: devnet.accounts.relayers[1].address });
    expect(retried).toEqual(first);
    expect(retried.from).toBe(devnet.accounts.relayers[0].address.toLowerCase());
    await expect(provider.submit({ ...request, data: feeRequest(settlementId).data })).rejects.toThrow(/different data/);
    await provider.waitForOutcome(first.id, 1);
  });

  it('sends one transaction when two provider instances submit the same key concurrently', async () => {
    const otherPool = createPgPool(db.url, 4);
    extraPools.push(otherPool);
    const settlementId = await newSettlement();
    const pendingBefore = await chainNonce(devnet.accounts.treasury.address, 'pending');

    const results = await Promise.all([
      newProvider().submit(feeRequest(settlementId)),
      newProvider({}, otherPool).submit(feeRequest(settlementId)),
      newProvider().submit(feeRequest(settlementId)),
    ]);

    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
    const row = await storedRow(settlementId);
    expect(row!.attempts).toHaveLength(1);
    await newProvider().waitForOutcome(row!.id, 1);
    expect(await chainNonce(devnet.accounts.treasury.address)).toBe(pendingBefore + 1);
    // the losers' allocations were rolled back: no nonce was skipped
    expect(await nextNonceInTable(devnet.accounts.treasury.address)).toBe(BigInt(pendingBefore + 1));
  });

  it('keeps 30 transactions of one key in flight with 30 consecutive nonces, all confirmed', async () => {
    const provider = newProvider();
    const { treasury } = devnet.accounts;
    const start = await chainNonce(treasury.address, 'pending');
    const settlementIds = await Promise.all(Array.from({ length: 30 }, () => newSettlement()));

    const { sent, outcomes } = await withIntervalMining(async () => {
      const sent = await Promise.all(settlementIds.map((id) => provider.submit(feeRequest(id))));
      return { sent, outcomes: await Promise.all(sent.map((tx) => provider.waitForOutcome(tx.id, 1))) };
    });

    expect(sent.map((tx) => tx.nonce).sort((a, b) => Number(a - b))).toEqual(Array.from({ length: 30 }, (_, i) => BigInt(start + i)));
    expect(outcomes.every((outcome) => outcome.status === 'confirmed')).toBe(true);
    expect(await chainNonce(treasury.address)).toBe(start + 30);
    expect(await nextNonceInTable(treasury.address)).toBe(BigInt(start + 30));
  });

  it('shares nonces between two provider instances (two processes) sending from one key', async () => {
    const otherPool = createPgPool(db.url, 4);
    const otherRpc = createProvider(devnet.rpcUrl, devnet.chainId);
    extraPools.push(otherPool);
    extraRpcs.push(otherRpc);
    const instances = [newProvider(), newProvider({}, otherPool, otherRpc)];
    const { treasury } = devnet.accounts;
    const start = await chainNonce(treasury.address, 'pending');
    const settlementIds = await Promise.all(Array.from({ length: 20 }, () => newSettlement()));

    const { sent, outcomes } = await withIntervalMining(async () => {
      const sent = await Promise.all(settlementIds.map((id, i) => instances[i % 2].submit(feeRequest(id))));
      return { sent, outcomes: await Promise.all(sent.map((tx, i) => instances[(i + 1) % 2].waitForOutcome(tx.id, 1))) };
    });

    const nonces = sent.map((tx) => tx.nonce).sort((a, b) => Number(a - b));
    expect(new Set(nonces).size).toBe(20);
    expect(nonces).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(start + i)));
    expect(outcomes.every((outcome) => outcome.status === 'confirmed')).toBe(true);
    expect(await chainNonce(treasury.address)).toBe(start + 20);
  });

  it('keeps the signed transaction when the key lacks ETH, and sends it once funded', async () => {
    const provider = newProvider();
    const relayer = devnet.accounts.relayers[1];
    const funds = await rpc.getBalance(relayer.address);
    const request = await transferRequest(await newSettlement(), 1n, relayer);
    const { settlementId } = request;
    await devnet.setEthBalance(relayer.address, 0n);
    try {
      const error = await provider.submit(request).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'TransactionRejectedError', category: 'insufficient_funds', retryable: true });
      const row = await storedRow(settlementId, 'transfer');
      expect(row).toMatchObject({ status: 'signed' });
      expect(row!.attempts[0].lastError).toMatch(/insufficient funds/i);
    } finally {
      await devnet.setEthBalance(relayer.address, funds);
    }
    const sent = await provider.submit(request);
    expect(sent.hashes).toHaveLength(1);
    expect((await provider.waitForOutcome(sent.id, 1)).status).toBe('confirmed');
  });

  it("moves its nonce forward when the key was used outside the provider", async () => {
    const provider = newProvider();
    const relayer = devnet.accounts.relayers[1];
    await provider.waitForOutcome((await provider.submit(await transferRequest(await newSettlement(), 1n, relayer))).id, 1);
    const outside = new Wallet(relayer.privateKey, devnet.provider);
    for (let i = 0; i < 2; i++) await (await outside.sendTransaction({ to: relayer.address, value: 0n })).wait();

    const sent = await provider.submit(await transferRequest(await newSettlement(), 1n, relayer));

    expect(sent.nonce).toBe(BigInt(await chainNonce(relayer.address)) - 1n);
    expect((await provider.waitForOutcome(sent.id, 1)).status).toBe('confirmed');
  });
});

// ---- crashes -----------------------------------------------------------------------------------------

describe('LocalKeyTransactionProvider after a crash', () => {
  it.each<SendPhase>(['nonce_allocated', 'attempt_stored', 'broadcast'])(
    'finishes a transaction that crashed after %s with the same nonce and no second transaction',
    async (phase) => {
      const settlementId = await newSettlement();
      const { treasury } = devnet.accounts;
      const pendingBefore = await chainNonce(treasury.address, 'pending');

      await expect(newProvider({ onPhase: crashAt(phase) }).submit(feeRequest(settlementId))).rejects.toThrow('simulated crash');
      const crashed = await storedRow(settlementId);
      expect(crashed).toMatchObject({ status: { nonce_allocated: 'allocated', attempt_stored: 'signed', broadcast: 'broadcast' }[phase], nonce: BigInt(pendingBefore) });
      expect(crashed!.attempts).toHaveLength(phase === 'nonce_allocated' ? 0 : 1);
      if (phase === 'attempt_stored') expect(await nodeKnows(crashed!.attempts[0].hash)).toBe(false);

      const resumed = await newProvider().submit(feeRequest(settlementId));
      const outcome = await newProvider().waitForOutcome(resumed.id, 1);

      expect(resumed).toMatchObject({ id: crashed!.id, nonce: crashed!.nonce });
      if (phase !== 'nonce_allocated') expect(resumed.hashes).toEqual([crashed!.attempts[0].hash]);
      expect(outcome).toMatchObject({ status: 'confirmed', hash: resumed.hash });
      expect((await storedRow(settlementId))!.attempts).toHaveLength(1);
      expect(await chainNonce(treasury.address)).toBe(pendingBefore + 1);
    },
  );

  it('finishes a transaction stored but never broadcast from waitForOutcome alone (find, then wait)', async () => {
    const settlementId = await newSettlement();
    await expect(newProvider({ onPhase: crashAt('attempt_stored') }).submit(feeRequest(settlementId))).rejects.toThrow('simulated crash');

    const provider = newProvider();
    const found = await provider.find(settlementId, 'fee');
    const outcome = await provider.waitForOutcome(found!.id, 1);

    expect(outcome).toMatchObject({ status: 'confirmed', hash: found!.hash });
  });

  it('does not return from find a transaction whose nonce was stored but that was never signed', async () => {
    const settlementId = await newSettlement();
    await expect(newProvider({ onPhase: crashAt('nonce_allocated') }).submit(feeRequest(settlementId))).rejects.toThrow('simulated crash');
    expect(await newProvider().find(settlementId, 'fee')).toBeNull();
    const resumed = await newProvider().submit(feeRequest(settlementId));
    expect((await newProvider().waitForOutcome(resumed.id, 1)).status).toBe('confirmed');
  });

  it('fills a nonce gap left by a crash, which otherwise holds every later transaction of the key', async () => {
    const { treasury } = devnet.accounts;
    const abandoned = await newSettlement();
    await expect(newProvider({ onPhase: crashAt('nonce_allocated') }).submit(feeRequest(abandoned))).rejects.toThrow('simulated crash');
    const { logger, lines } = recordingLogger();
    const provider = newProvider({ replaceAfterMs: 150, logger });
    const later = await provider.submit(feeRequest(await newSettlement()));
    await sleep(50);
    expect(await rpc.getTransactionReceipt(later.hash)).toBeNull(); // queued behind the missing nonce

    const outcome = await provider.waitForOutcome(later.id, 1);

    expect(outcome.status).toBe('confirmed');
    expect(lines).toContainEqual(expect.objectContaining({ message: 'sending lower-nonce transactions that hold a stuck one' }));
    const gap = await storedRow(abandoned);
    expect(gap!.attempts).toHaveLength(1);
    expect(gap!.nonce).toBe(later.nonce - 1n);
    expect((await provider.waitForOutcome(gap!.id, 1)).status).toBe('confirmed');
    expect(await chainNonce(treasury.address)).toBe(Number(later.nonce) + 1);
  });
});

// ---- simulation and reverts --------------------------------------------------------------------------

describe('LocalKeyTransactionProvider simulation and reverts', () => {
  it('refuses a transaction that would revert, with its reason, and stores nothing', async () => {
    const provider = newProvider();
    const { relayers } = devnet.accounts;
    const nonceBefore = await nextNonceInTable(relayers[0].address);
    const tooMuch = await newSettlement();

    const error = await provider.submit(await transferRequest(tooMuch, usdc('1000000'))).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(TransactionWouldRevertError);
    expect(error).toMatchObject({ reason: 'ERC20: transfer amount exceeds balance', retryable: false });
    expect(await storedRow(tooMuch, 'transfer')).toBeNull();
    expect(await nextNonceInTable(relayers[0].address)).toBe(nonceBefore);
  });

  it('refuses an authorization that was already used', async () => {
    const provider = newProvider();
    const signed = await devnet.signTransferAuthorization(devnet.accounts.payer.privateKey, { to: devnet.accounts.merchant.address, value: 1n });
    const first = await provider.submit(transferRequestFor(await newSettlement(), signed.authorization, signed.signature));
    await provider.waitForOutcome(first.id, 1);
    const replay = await newSettlement();

    const error = await provider.submit(transferRequestFor(replay, signed.authorization, signed.signature)).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(TransactionWouldRevertError);
    expect((error as TransactionWouldRevertError).reason).toBe('FiatTokenV2: authorization is used or canceled');
    expect(await storedRow(replay, 'transfer')).toBeNull();
  });

  it('reports an on-chain revert with its reason when state changed between simulation and mining', async () => {
    // a merchant with 100 USDC and two fees of 60: each fine alone, not both
    const merchant = Wallet.createRandom();
    await devnet.setEthBalance(merchant.address, parseUnits('1', 'ether'));
    await devnet.mint(merchant.address, usdc('100'));
    await devnet.approveTreasury(merchant.privateKey, usdc('1000'));
    const settlementIds = [await newSettlement(), await newSettlement()];
    // both simulations run before either transaction reaches the pool
    let allocated = 0;
    let release!: () => void;
    const bothSimulated = new Promise<void>((resolve) => (release = resolve));
    const provider = newProvider({
      onPhase: async (phase) => {
        if (phase !== 'nonce_allocated') return;
        if (++allocated === 2) release();
        await bothSimulated;
      },
    });

    const outcomes = await withAutomineOff(async () => {
      const sent = await Promise.all(settlementIds.map((id) => provider.submit(feeRequest(id, usdc('60'), merchant.address))));
      const waiting = sent.map((tx) => provider.waitForOutcome(tx.id, 1));
      await rpc.send('evm_mine', []);
      return Promise.all(waiting);
    });

    const reverted = outcomes.filter((o) => o.status === 'reverted');
    expect(outcomes.filter((o) => o.status === 'confirmed')).toHaveLength(1);
    expect(reverted).toHaveLength(1);
    expect(reverted[0]).toMatchObject({ reason: 'ERC20: transfer amount exceeds balance', blockNumber: outcomes[0].blockNumber });
    const rows = await Promise.all(settlementIds.map((id) => storedRow(id)));
    expect(rows.find((row) => row!.status === 'reverted')).toMatchObject({
      minedHash: reverted[0].hash,
      revertReason: 'ERC20: transfer amount exceeds balance',
    });
  });
});

// ---- keeping transactions alive ---------------------------------------------------------------------

describe('LocalKeyTransactionProvider keeping transactions alive', () => {
  it('re-broadcasts the stored transaction (same hash) when the node dropped it', async () => {
    const provider = newProvider();
    const outcome = await withAutomineOff(async () => {
      const sent = await provider.submit(feeRequest(await newSettlement()));
      await rpc.send('anvil_dropAllTransactions', []);
      expect(await nodeKnows(sent.hash)).toBe(false);
      const waiting = provider.waitForOutcome(sent.id, 1);
      await until(() => nodeKnows(sent.hash), 'the re-broadcast');
      await rpc.send('evm_mine', []);
      const outcome = await waiting;
      expect(outcome.hash).toBe(sent.hash);
      return outcome;
    });
    expect(outcome.status).toBe('confirmed');
  });

  it('replaces a transaction still unmined after replaceAfterMs with the same nonce and higher fees', async () => {
    const { logger, lines } = recordingLogger();
    const provider = newProvider({ replaceAfterMs: 200, logger });
    await withAutomineOff(async () => {
      const sent = await provider.submit(feeRequest(await newSettlement()));
      const waiting = provider.waitForOutcome(sent.id, 1);
      const replacement = await replacementOf(sent.id);
      await rpc.send('evm_mine', []);
      const outcome = await waiting;

      expect(outcome).toMatchObject({ status: 'confirmed', hash: replacement.hash });
      expect(lines).toContainEqual(expect.objectContaining({ message: 'replacing transaction with higher fees', meta: expect.objectContaining({ why: expect.stringMatching(/^unmined after/) }) }));
      await expectReplacementMined(sent, replacement.hash);
    });
  });

  it('replaces a transaction at once when the base fee rose above what it offers', async () => {
    const { logger, lines } = recordingLogger();
    const provider = newProvider({ logger }); // replaceAfterMs stays 30 s: the node's refusal triggers this one
    try {
      await withAutomineOff(async () => {
        const sent = await provider.submit(feeRequest(await newSettlement()));
        await rpc.send('anvil_setNextBlockBaseFeePerGas', [toQuantity(gwei('30'))]);
        await rpc.send('evm_mine', []);
        expect(await rpc.getTransactionReceipt(sent.hash)).toBeNull(); // the block left it out
        const waiting = provider.waitForOutcome(sent.id, 1);
        const replacement = await replacementOf(sent.id);
        await rpc.send('evm_mine', []);
        const outcome = await waiting;

        expect(outcome).toMatchObject({ status: 'confirmed', hash: replacement.hash });
        expect(BigInt(replacement.maxFeePerGas)).toBeGreaterThan(gwei('30'));
        expect(lines).toContainEqual(expect.objectContaining({ message: 'replacing transaction with higher fees', meta: expect.objectContaining({ why: 'max fee per gas less than block base fee' }) }));
        await expectReplacementMined(sent, replacement.hash);
      });
    } finally {
      await rpc.send('anvil_setNextBlockBaseFeePerGas', [toQuantity(gwei('0.1'))]);
      await rpc.send('evm_mine', []);
    }
  });

  it('stops with NonceConsumedError, not a loop, when a transaction that is not ours used the nonce', async () => {
    const provider = newProvider();
    const { treasury } = devnet.accounts;
    const settlementId = await newSettlement();
    const sent = await withAutomineOff(async () => {
      const sent = await provider.submit(feeRequest(settlementId));
      await rpc.send('anvil_dropTransaction', [sent.hash]);
      // someone else sends from the treasury key with the same nonce
      const outsider = new Wallet(treasury.privateKey, rpc);
      await outsider.sendTransaction({ to: treasury.address, value: 0n, nonce: Number(sent.nonce) });
      await rpc.send('evm_mine', []);
      return sent;
    });

    const started = Date.now();
    const error = await provider.waitForOutcome(sent.id, 1).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(NonceConsumedError);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await storedRow(settlementId)).toMatchObject({ status: 'replaced', minedHash: null });
    // every later call says the same at once, without sending anything
    expect(await provider.submit(feeRequest(settlementId))).toMatchObject({ id: sent.id, hashes: [sent.hash] });
    await expect(provider.waitForOutcome(sent.id, 1)).rejects.toBeInstanceOf(NonceConsumedError);
  });
});

// ---- the real node's words ---------------------------------------------------------------------------

describe("NODE_ERROR_RULES against anvil's real answers", () => {
  it('classifies what anvil and a dead endpoint actually say', async () => {
    const sender = Wallet.createRandom();
    await devnet.setEthBalance(sender.address, parseUnits('1', 'ether'));
    const base = { type: 2, chainId: devnet.chainId, to: sender.address, value: 0n, gasLimit: 21_000n };
    const sign = (nonce: number, maxFeePerGas: bigint) =>
      sender.signTransaction({ ...base, nonce, maxFeePerGas, maxPriorityFeePerGas: maxFeePerGas < gwei('1') ? maxFeePerGas : gwei('1') });
    const categoryOf = (promise: Promise<unknown>) => promise.then(() => 'accepted', (error: unknown) => classifyNodeError(error).category);
    const send = (raw: string) => rpc.send('eth_sendRawTransaction', [raw]);

    const first = await sign(0, gwei('10'));
    const answers = await withAutomineOff(async () => ({
      accepted: await categoryOf(send(first)),
      again: await categoryOf(send(first)),
      belowBaseFee: await categoryOf(send(await sign(1, 1n))),
      unfunded: await categoryOf(send(await Wallet.createRandom().signTransaction({ ...base, nonce: 0, maxFeePerGas: gwei('10'), maxPriorityFeePerGas: 1n }))),
    }));
    await rpc.send('evm_mine', []);
    const mined = await categoryOf(send(first));
    const dead = createProvider('http://127.0.0.1:1', devnet.chainId);
    const refused = await categoryOf(dead.send('eth_blockNumber', [])).finally(() => dead.destroy());
    const revert = await categoryOf(rpc.estimateGas(feeRequest('x', usdc('1000000'))));

    expect({ ...answers, mined, refused, revert }).toEqual({
      accepted: 'accepted',
      again: 'already_known',
      belowBaseFee: 'fee_too_low',
      unfunded: 'insufficient_funds',
      mined: 'nonce_too_low',
      refused: 'rpc_unavailable',
      revert: 'execution_reverted',
    });
  });
});

// ---- RPC down ----------------------------------------------------------------------------------------

describe('LocalKeyTransactionProvider with the RPC down', () => {
  it('throws a retryable RpcUnavailableError and leaves the database consistent', async () => {
    // another chain id: the same treasury address on the main devnet's chain has its own nonce row
    const own = await startDevnet({ relayerCount: 1, chainId: 31337 });
    const ownRpc = createProvider(own.rpcUrl, own.chainId);
    const { treasury, merchant } = own.accounts;
    const options = { receiptPollIntervalMs: 20, rebroadcastIntervalMs: 50, rpcOutageToleranceMs: 200 };
    const request = (settlementId: string): TransactionRequest => ({
      settlementId,
      purpose: 'fee',
      chainId: own.chainId,
      from: treasury.address,
      to: own.token,
      data: fiatTokenInterface.encodeFunctionData('transferFrom', [merchant.address, treasury.address, 1_000n]),
    });
    try {
      // anvil stops between storing the signed transaction and broadcasting it
      const stopsAnvil = new LocalKeyTransactionProvider(db.pool, { [own.chainId]: ownRpc }, [treasury], {
        ...options,
        onPhase: async (phase) => {
          if (phase === 'attempt_stored') await own.stop();
        },
      });
      const midway = await newSettlement();
      const error = await stopsAnvil.submit(request(midway)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RpcUnavailableError);
      expect(error).toMatchObject({ retryable: true });
      const row = await storedRow(midway);
      expect(row).toMatchObject({ status: 'signed', nonce: 0n });
      expect(row!.attempts).toHaveLength(1);
      expect(row!.attempts[0]).toMatchObject({ broadcastAt: null, lastError: expect.stringMatching(/ECONNREFUSED/) });

      const provider = new LocalKeyTransactionProvider(db.pool, { [own.chainId]: ownRpc }, [treasury], options);
      // waiting rides out the outage for rpcOutageToleranceMs, then gives up retryably
      await expect(provider.waitForOutcome(row!.id, 1)).rejects.toBeInstanceOf(RpcUnavailableError);
      // a new submit fails before anything is allocated
      const later = await newSettlement();
      const nonceBefore = await db.prisma.signerNonce.findUnique({ where: { chainId_address: { chainId: own.chainId, address: treasury.address.toLowerCase() } } });
      await expect(provider.submit(request(later))).rejects.toBeInstanceOf(RpcUnavailableError);
      expect(await storedRow(later)).toBeNull();
      expect(await db.prisma.signerNonce.findUnique({ where: { chainId_address: { chainId: own.chainId, address: treasury.address.toLowerCase() } } })).toEqual(nonceBefore);
      // the stored transaction is untouched, ready for the retry
      expect(await storedRow(midway)).toMatchObject({ status: 'signed', attempts: [{ hash: row!.attempts[0].hash }] });
    } finally {
      ownRpc.destroy();
      await own.stop();
    }
  });
});

// ---- rows a database writer inserts or rewrites (issue 40) ---------------------------------------------

describe('LocalKeyTransactionProvider and rows it did not store', () => {
  it("signs no row a database writer inserted into a nonce gap of the treasury's key: nothing moves", async () => {
    const { treasury, merchant } = devnet.accounts;
    const attacker = Wallet.createRandom().address;
    // the writer takes the key's next nonce for its own row (no signed version: the gap filler would sign it)
    const gapNonce = BigInt(await chainNonce(treasury.address, 'pending'));
    const forged = await newSettlement();
    await db.pool.query(
      `INSERT INTO chain_transactions (id, settlement_id, purpose, chain_id, from_address, to_address, data, nonce, gas_limit, status, created_at, updated_at)
       VALUES ('ctx_forged_gap', $1, 'fee', $2, $3, $4, $5, $6, '100000', 'allocated', now(), now())`,
      [forged, devnet.chainId, treasury.address.toLowerCase(), devnet.token.toLowerCase(),
        fiatTokenInterface.encodeFunctionData('transferFrom', [merchant.address, attacker, usdc('100')]).toLowerCase(), gapNonce.toString()],
    );
    await db.pool.query(
      `INSERT INTO signer_nonces (chain_id, address, next_nonce, updated_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (chain_id, address) DO UPDATE SET next_nonce = $3`,
      [devnet.chainId, treasury.address.toLowerCase(), (gapNonce + 1n).toString()],
    );
    const { logger, lines } = recordingLogger();
    const provider = newProvider({ replaceAfterMs: 100, outcomeTimeoutMs: 1_500, logger });
    const later = await provider.submit(feeRequest(await newSettlement()));
    expect(later.nonce).toBe(gapNonce + 1n);

    // stuck behind the gap, the wait looks for lower nonces to send: the forged row is refused, not signed
    await provider.waitForOutcome(later.id, 1).catch(() => undefined);
    expect(lines).toContainEqual(expect.objectContaining({ message: expect.stringMatching(/^stored transaction refused/), meta: expect.objectContaining({ id: 'ctx_forged_gap' }) }));
    expect((await storedRow(forged))!.attempts).toHaveLength(0);
    expect(await devnet.balanceOf(attacker)).toBe(0n);

    // clean-up for the next tests: the key's own no-op fills the gap, and the forged row is ended
    await (await new Wallet(treasury.privateKey, rpc).sendTransaction({ to: treasury.address, nonce: Number(gapNonce) })).wait();
    await db.pool.query(`UPDATE chain_transactions SET status = 'replaced' WHERE id = 'ctx_forged_gap'`);
    expect((await provider.waitForOutcome(later.id, 1)).status).toBe('confirmed');
    expect(await devnet.balanceOf(attacker)).toBe(0n);
  });

  it('replaces a transaction whose row was rewritten with the version its key signed, not the row', async () => {
    const { merchant } = devnet.accounts;
    const attacker = Wallet.createRandom().address;
    const provider = newProvider({ replaceAfterMs: 200 });
    await withAutomineOff(async () => {
      const settlementId = await newSettlement();
      const request = feeRequest(settlementId);
      const sent = await provider.submit(request);
      const rewritten = fiatTokenInterface.encodeFunctionData('transferFrom', [merchant.address, attacker, usdc('100')]).toLowerCase();
      await db.pool.query(`UPDATE chain_transactions SET data = $2, gas_limit = '30000000' WHERE id = $1`, [sent.id, rewritten]);
      const waiting = provider.waitForOutcome(sent.id, 1);
      const replacement = await replacementOf(sent.id);
      await rpc.send('evm_mine', []);
      await waiting;

      const signed = Transaction.from(replacement.rawTransaction);
      expect(signed.data).toBe(request.data.toLowerCase());
      expect(signed.gasLimit).toBeLessThan(30_000_000n);
      expect(await devnet.balanceOf(attacker)).toBe(0n);
    });
  });
});
