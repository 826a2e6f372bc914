// The executor on anvil with Circle's real USDC: what it does for our relayers, and that nobody else and no
// other arguments can make it move funds (property-based, fast-check).
import { startDevnet, type Devnet } from '@facilitator/devnet';
import { Contract, getAddress, hexlify, id, parseEther, parseUnits, Wallet, type TransactionReceipt } from 'ethers';
import fc from 'fast-check';
import { itemKey, itemOutcomes, settleCalldata, executorInterface, type ExecutorItem } from './executor-calls';
import { executorStatus, setUpExecutor, type ExecutorConfig, type SetupProgress } from './executor-setup';

const usdc = (amount: string) => parseUnits(amount, 6);
const FEE = 10_000n;
const ITEM_GAS = 200_000n;

let devnet: Devnet;
let config: ExecutorConfig;
let executor: string;

beforeAll(async () => {
  devnet = await startDevnet({ relayerCount: 2, treasuryAllowance: usdc('1000') });
  const { treasury, relayers } = devnet.accounts;
  config = { chainId: devnet.chainId, token: devnet.token, treasury: treasury.address, fee: FEE, relayers: relayers.map((r) => r.address) };
  const status = await setUpExecutor(devnet.provider, config, { treasuryKey: treasury.privateKey, senderKey: relayers[0].privateKey });
  if (status.state !== 'ready') throw new Error(`executor not ready: ${JSON.stringify(status)}`);
  executor = status.executor;
}, 60_000);

afterAll(() => devnet?.stop());

async function item(fields: { payerKey?: string; to?: string; value?: bigint; validBefore?: bigint } = {}): Promise<ExecutorItem> {
  const signed = await devnet.signTransferAuthorization(fields.payerKey ?? devnet.accounts.payer.privateKey, {
    to: fields.to ?? devnet.accounts.merchant.address,
    value: fields.value ?? usdc('1'),
    validBefore: fields.validBefore,
  });
  return { ...signed.authorization, signature: signed.signature, gas: ITEM_GAS };
}

/** Sends `settle(items)` to the treasury from `key`, with a fixed gas limit so that a revert is mined too. */
async function send(key: string, items: ExecutorItem[], to = devnet.accounts.treasury.address): Promise<TransactionReceipt> {
  const wallet = new Wallet(key, devnet.provider);
  const tx = await wallet.sendTransaction({ to, data: settleCalldata(items), gasLimit: 1_500_000n });
  return (await tx.wait(1, 30_000).catch((error: { receipt?: TransactionReceipt }) => {
    if (error.receipt) return error.receipt;
    throw error;
  }))!;
}

/** Every balance and the allowance a settlement could touch. */
async function moneyState(extra: string[] = []) {
  const { payer, merchant, treasury } = devnet.accounts;
  const holders = [payer.address, merchant.address, treasury.address, executor, ...extra];
  const balances = await Promise.all(holders.map((h) => devnet.balanceOf(h)));
  return { balances: Object.fromEntries(holders.map((h, i) => [h, balances[i]])), allowance: await devnet.allowance(merchant.address, treasury.address) };
}

const relayerKey = () => devnet.accounts.relayers[0].privateKey;

describe('set-up', () => {
  it('reports the delegation ready, and a second set-up sends nothing', async () => {
    const progress: SetupProgress[] = [];
    const status = await setUpExecutor(devnet.provider, config, { treasuryKey: devnet.accounts.treasury.privateKey, senderKey: relayerKey() }, (p) => progress.push(p));
    expect(status).toEqual({ state: 'ready', executor, relayers: config.relayers.map((a) => getAddress(a)) });
    expect(progress.map((p) => p.step)).toEqual(['checked']);
  });

  it('says what differs when the configuration does not match the delegated executor', async () => {
    expect(await executorStatus(devnet.provider, { ...config, fee: 5_000n })).toMatchObject({ state: 'wrong_delegate', why: expect.stringContaining('fee is 10000') });
    expect(await executorStatus(devnet.provider, { ...config, relayers: [config.relayers[0]] })).toMatchObject({ state: 'wrong_delegate', why: expect.stringContaining('relayers') });
    const stranger = Wallet.createRandom().address;
    expect(await executorStatus(devnet.provider, { ...config, treasury: stranger })).toMatchObject({ state: 'not_delegated' });
  });

  it("accepts, for a running worker, an executor that names some of its relayers (a key rotation's middle), and says which it names", async () => {
    const stranger = Wallet.createRandom().address;
    const [first] = config.relayers;
    // the worker holds one key the executor names and one it does not (added to the workers first)
    expect(await executorStatus(devnet.provider, { ...config, relayers: [first, stranger] }, 'some')).toEqual({
      state: 'ready',
      executor,
      relayers: config.relayers.map((a) => getAddress(a)),
    });
    // ... but never one whose keys the executor does not name at all, nor with another fee
    expect(await executorStatus(devnet.provider, { ...config, relayers: [stranger] }, 'some')).toMatchObject({ state: 'wrong_delegate', why: expect.stringContaining('(none of them)') });
    expect(await executorStatus(devnet.provider, { ...config, fee: 5_000n }, 'some')).toMatchObject({ state: 'wrong_delegate', why: expect.stringContaining('fee is 10000') });
    // setting up (and the CLI's status) keeps the exact rule
    expect(await executorStatus(devnet.provider, { ...config, relayers: [first, stranger] })).toMatchObject({ state: 'wrong_delegate' });
  });
});

describe('settle', () => {
  it('collects the fee and executes the transfer in one transaction', async () => {
    const { payer, merchant, treasury } = devnet.accounts;
    const before = await moneyState();
    const one = await item({ value: usdc('2') });
    const receipt = await send(relayerKey(), [one]);
    expect(receipt.status).toBe(1);
    // the fee the executor took, read from the item's own logs
    const token = devnet.token.toLowerCase();
    expect(itemOutcomes(receipt.logs, treasury.address).get(itemKey(one.from, one.nonce))).toEqual({
      settled: true,
      toTreasury: [{ token, from: merchant.address.toLowerCase(), value: FEE }],
    });
    const after = await moneyState();
    expect(after.balances[payer.address]).toBe(before.balances[payer.address] - usdc('2'));
    expect(after.balances[merchant.address]).toBe(before.balances[merchant.address] + usdc('2') - FEE);
    expect(after.balances[treasury.address]).toBe(before.balances[treasury.address] + FEE);
    expect(after.allowance).toBe(before.allowance - FEE);
    // fee first: the merchant's Transfer to the treasury is logged before the payer's
    const transfers = receipt.logs.filter((l) => l.address.toLowerCase() === devnet.token.toLowerCase() && l.topics[0] === id('Transfer(address,address,uint256)'));
    expect(transfers.map((l) => '0x' + l.topics[1].slice(26))).toEqual([merchant.address.toLowerCase(), payer.address.toLowerCase()]);
  });

  it('undoes an item whose fee cannot be collected or whose transfer fails, and settles the others', async () => {
    const { treasury } = devnet.accounts;
    const poorMerchant = Wallet.createRandom(); // no allowance, no balance
    const poorPayer = Wallet.createRandom(); // no USDC
    const items = [
      await item(),
      await item({ to: poorMerchant.address }),
      await item({ payerKey: poorPayer.privateKey }),
      await item({ validBefore: BigInt(Math.floor(Date.now() / 1000) - 10) }),
      await item(),
    ];
    const before = await moneyState([poorMerchant.address, poorPayer.address]);
    const receipt = await send(relayerKey(), items);
    const outcomes = itemOutcomes(receipt.logs, treasury.address);
    const outcome = (i: number) => outcomes.get(itemKey(items[i].from, items[i].nonce));
    // each settled item sees only its own fee, not the earlier items' (the undone ones logged nothing)
    const feeOf = (i: number) => ({ settled: true, toTreasury: [{ token: devnet.token.toLowerCase(), from: items[i].to.toLowerCase(), value: FEE }] });
    expect(outcome(0)).toEqual(feeOf(0));
    expect(outcome(1)).toMatchObject({ settled: false, stage: 'fee', reason: expect.stringContaining('allowance') });
    expect(outcome(2)).toMatchObject({ settled: false, stage: 'transfer', reason: expect.stringContaining('balance') });
    expect(outcome(3)).toMatchObject({ settled: false, stage: 'transfer', reason: expect.stringContaining('expired') });
    expect(outcome(4)).toEqual(feeOf(4));
    const after = await moneyState([poorMerchant.address, poorPayer.address]);
    // exactly two fees and two payments moved
    expect(after.balances[treasury.address]).toBe(before.balances[treasury.address] + 2n * FEE);
    expect(after.allowance).toBe(before.allowance - 2n * FEE);
    for (const failedItem of items.slice(1, 4)) expect(await devnet.usdc.authorizationState(failedItem.from, failedItem.nonce)).toBe(false);
  });

  it('does not charge the merchant when the payer cancelled the authorization on chain', async () => {
    const { payer, treasury } = devnet.accounts;
    const one = await item();
    const cancel = await new Wallet(payer.privateKey).signTypedData(
      { ...devnet.eip712Domain },
      { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
      { authorizer: payer.address, nonce: one.nonce },
    );
    const { v, r, s } = (await import('ethers')).Signature.from(cancel);
    await (await (devnet.usdc.connect(new Wallet(devnet.accounts.deployer.privateKey, devnet.provider)) as Contract).cancelAuthorization(payer.address, one.nonce, v, r, s)).wait();
    const before = await moneyState();
    const receipt = await send(relayerKey(), [one]);
    expect(itemOutcomes(receipt.logs, treasury.address).get(itemKey(one.from, one.nonce))).toMatchObject({ settled: false, stage: 'transfer', reason: expect.stringContaining('used or canceled') });
    expect(await moneyState()).toEqual(before);
  });
});

describe('only our keys, with only these arguments, move funds', () => {
  const strangers = Array.from({ length: 4 }, () => Wallet.createRandom());
  beforeAll(async () => {
    for (const s of strangers) await devnet.setEthBalance(s.address, parseEther('10'));
  });

  it('refuses every caller that is not a configured relayer, whatever it sends', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...strangers, new Wallet(devnet.accounts.merchant.privateKey), new Wallet(devnet.accounts.payer.privateKey)), fc.integer({ min: 1, max: 3 }), async (caller, count) => {
        if ((await devnet.provider.getBalance(caller.address)) < parseEther('1')) await devnet.setEthBalance(caller.address, parseEther('10'));
        const items = await Promise.all(Array.from({ length: count }, () => item()));
        const before = await moneyState();
        const receipt = await send(caller.privateKey, items);
        expect(receipt.status).toBe(0);
        expect(await moneyState()).toEqual(before);
        for (const i of items) expect(await devnet.usdc.authorizationState(i.from, i.nonce)).toBe(false);
      }),
      { numRuns: 12 },
    );
  });

  it('moves nothing for a relayer whose items are not validly signed authorizations, whatever their fields', async () => {
    const { payer, merchant, treasury } = devnet.accounts;
    const address = fc.constantFrom(payer.address, merchant.address, treasury.address, executor, strangers[0].address, '0x0000000000000000000000000000000000000000');
    const arbitraryItem = fc.record({
      from: address,
      to: address,
      value: fc.bigInt({ min: 0n, max: usdc('100') }),
      validAfter: fc.constant(0n),
      validBefore: fc.bigInt({ min: 0n, max: 2n ** 40n }),
      nonce: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => hexlify(b)),
      signature: fc.uint8Array({ minLength: 0, maxLength: 96 }).map((b) => hexlify(b)),
      gas: fc.bigInt({ min: 0n, max: 300_000n }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(arbitraryItem, { minLength: 1, maxLength: 4 }), async (items) => {
        const before = await moneyState([strangers[0].address]);
        const receipt = await send(relayerKey(), items);
        expect(receipt.status).toBe(1);
        const outcomes = [...itemOutcomes(receipt.logs, treasury.address).values()];
        expect(outcomes.every((o) => !o.settled)).toBe(true);
        expect(await moneyState([strangers[0].address])).toEqual(before);
      }),
      { numRuns: 25 },
    );
  });

  it('charges no fee for a validly signed payment smaller than the fee, even sent by a relayer (a leaked key cannot drain allowances)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: 0n, max: FEE - 1n }), async (value) => {
        const small = await item({ value });
        const before = await moneyState();
        const receipt = await send(relayerKey(), [small]);
        expect(itemOutcomes(receipt.logs, devnet.accounts.treasury.address).get(itemKey(small.from, small.nonce))).toEqual({ settled: false, stage: 'fee', reason: 'the payment is smaller than the fee' });
        expect(await moneyState()).toEqual(before);
      }),
      { numRuns: 8 },
    );
  });

  it('runs settleOne only as a part of settle, and only as the treasury', async () => {
    const one = await item();
    const before = await moneyState();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(relayerKey(), strangers[1].privateKey, devnet.accounts.merchant.privateKey), async (key) => {
        const wallet = new Wallet(key, devnet.provider);
        const direct = executorInterface.encodeFunctionData('settleOne', [[one.from, one.to, one.value, one.validAfter, one.validBefore, one.nonce, one.signature, one.gas]]);
        const tx = await wallet.sendTransaction({ to: devnet.accounts.treasury.address, data: direct, gasLimit: 500_000n });
        expect((await devnet.provider.waitForTransaction(tx.hash))!.status).toBe(0);
      }),
      { numRuns: 6 },
    );
    // the executor's own address: no treasury's allowance to spend, and it refuses anyway
    expect((await send(relayerKey(), [one], executor)).status).toBe(0);
    expect(await moneyState()).toEqual(before);
  });

  it('refuses to act for another account that delegates to it', async () => {
    const other = Wallet.createRandom(devnet.provider);
    await devnet.setEthBalance(other.address, parseEther('1'));
    const auth = await other.authorize({ address: executor, nonce: 0, chainId: devnet.chainId });
    const relayer = new Wallet(relayerKey(), devnet.provider);
    await (await relayer.sendTransaction({ type: 4, to: other.address, authorizationList: [auth] })).wait();
    // the merchant approves the other account too: a delegation to our code still must not spend it
    await (await (devnet.usdc.connect(new Wallet(devnet.accounts.merchant.privateKey, devnet.provider)) as Contract).approve(other.address, usdc('10'))).wait();
    const one = await item();
    const before = await moneyState([other.address]);
    expect((await send(relayerKey(), [one], other.address)).status).toBe(0);
    expect(await moneyState([other.address])).toEqual(before);
  });
});
