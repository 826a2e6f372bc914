// The executor on anvil with Circle's real USDC, Permit2 and x402's Permit2 proxies (the devnet's doubles at
// their canonical addresses): what it does for our relayers, and that nobody else and no other arguments can
// make it move funds or call anything but the payment's one entry point (property-based, fast-check).
import { startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { Contract, ContractFactory, getAddress, hexlify, id, Interface, MaxUint256, parseEther, parseUnits, toBeHex, Wallet, type TransactionReceipt } from 'ethers';
import fc from 'fast-check';
import { itemKey, itemOutcomes, itemTuple, settleCalldata, executorInterface, type ExecutorItem } from './executor-calls';
import { executorStatus, setUpExecutor, type ExecutorConfig, type SetupProgress } from './executor-setup';
import { SETTLEMENT_EXECUTOR_V1_ARTIFACT } from './testing/settlement-executor-v1-artifact';

/**
 * x402's Permit2 proxies, at one address on every chain (CREATE2): the executor's targets besides the token. This
 * package names no mechanism (payment-mechanisms, which depends on it, gives them to its callers); its test does.
 */
const X402_PERMIT2_PROXIES = {
  exact: '0x402085c248eea27d92e8b30b2c58ed07f9e20001',
  upto: '0x4020a4f3b7b90cca423b9fabcc0ce57c6c240002',
} as const;

const usdc = (amount: string) => parseUnits(amount, 6);
const FEE = 10_000n;
const ITEM_GAS = 200_000n;

let devnet: Devnet;
let config: ExecutorConfig;
let executor: string;

beforeAll(async () => {
  devnet = await startDevnet({ relayerCount: 2, treasuryAllowance: usdc('1000') });
  const { treasury, relayers } = devnet.accounts;
  const targets = { exactProxy: X402_PERMIT2_PROXIES.exact, uptoProxy: X402_PERMIT2_PROXIES.upto };
  config = { chainId: devnet.chainId, token: devnet.token, targets, treasury: treasury.address, fee: FEE, relayers: relayers.map((r) => r.address) };
  await approvePermit2(devnet.accounts.payer.privateKey, MaxUint256);
  const status = await setUpExecutor(devnet.provider, config, { treasuryKey: treasury.privateKey, senderKey: relayers[0].privateKey });
  if (status.state !== 'ready') throw new Error(`executor not ready: ${JSON.stringify(status)}`);
  executor = status.executor;
}, 60_000);

afterAll(() => devnet?.stop());

const PERMIT2 = '0x000000000022d473030f116ddee9f6b43ac78ba3';
const fiatToken = new Interface([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function transferFrom(address from, address to, uint256 value) returns (bool)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function approve(address spender, uint256 value) returns (bool)',
]);
const PERMIT = '((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit';
const exactProxy = new Interface([
  `function settle(${PERMIT}, address owner, (address to, uint256 validAfter) witness, bytes signature)`,
  `function settleWithPermit((uint256 value, uint256 deadline, bytes32 r, bytes32 s, uint8 v) permit2612, ${PERMIT}, address owner, (address to, uint256 validAfter) witness, bytes signature)`,
]);
const uptoProxy = new Interface([`function settle(${PERMIT}, uint256 amount, address owner, (address to, address facilitator, uint256 validAfter) witness, bytes signature)`]);
const permit2Interface = new Interface(['function invalidateUnorderedNonces(uint256 wordPos, uint256 mask)']);

/** A payer's EIP-3009 authorization to the merchant, as an item calling the token's transferWithAuthorization. */
async function item(fields: { payerKey?: string; to?: string; value?: bigint; validBefore?: bigint } = {}): Promise<ExecutorItem> {
  const signed = await devnet.signTransferAuthorization(fields.payerKey ?? devnet.accounts.payer.privateKey, {
    to: fields.to ?? devnet.accounts.merchant.address,
    value: fields.value ?? usdc('1'),
    validBefore: fields.validBefore,
  });
  const a = signed.authorization;
  const data = fiatToken.encodeFunctionData('transferWithAuthorization', [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signed.signature]);
  return { payer: a.from, merchant: a.to, amount: a.value, nonce: a.nonce, target: devnet.token, data, gas: ITEM_GAS };
}

let nextPermit2Nonce = BigInt(Date.now()) << 16n;

/**
 * A payer's Permit2 payment to the merchant through x402's exact proxy (or, with `facilitator`, the upto proxy
 * settling `settled` of it), signed as @x402/evm's client signs it, as an item: its amount is what the
 * merchant must receive (the permitted amount unless given).
 */
async function permit2Item(
  fields: { payerKey?: string; to?: string; value?: bigint; facilitator?: string; settled?: bigint; amount?: bigint; merchant?: string } = {},
): Promise<ExecutorItem> {
  const payer = new Wallet(fields.payerKey ?? devnet.accounts.payer.privateKey);
  const to = fields.to ?? devnet.accounts.merchant.address;
  const value = fields.value ?? usdc('1');
  const nonce = nextPermit2Nonce++;
  const upto = fields.facilitator !== undefined;
  const permit = { permitted: { token: devnet.token, amount: value }, nonce, deadline: BigInt(Math.floor(Date.now() / 1000) + 3600) };
  const witness = upto ? { to, facilitator: fields.facilitator!, validAfter: 0n } : { to, validAfter: 0n };
  const witnessType = upto
    ? [{ name: 'to', type: 'address' }, { name: 'facilitator', type: 'address' }, { name: 'validAfter', type: 'uint256' }]
    : [{ name: 'to', type: 'address' }, { name: 'validAfter', type: 'uint256' }];
  const signature = await payer.signTypedData(
    { name: 'Permit2', chainId: devnet.chainId, verifyingContract: PERMIT2 },
    {
      PermitWitnessTransferFrom: [
        { name: 'permitted', type: 'TokenPermissions' },
        { name: 'spender', type: 'address' },
        { name: 'nonce', type: 'uint256' },
        { name: 'deadline', type: 'uint256' },
        { name: 'witness', type: 'Witness' },
      ],
      TokenPermissions: [{ name: 'token', type: 'address' }, { name: 'amount', type: 'uint256' }],
      Witness: witnessType,
    },
    { ...permit, spender: upto ? X402_PERMIT2_PROXIES.upto : X402_PERMIT2_PROXIES.exact, witness },
  );
  const settled = fields.settled ?? value;
  const data = upto
    ? uptoProxy.encodeFunctionData('settle', [permit, settled, payer.address, witness, signature])
    : exactProxy.encodeFunctionData('settle', [permit, payer.address, witness, signature]);
  return {
    payer: payer.address,
    merchant: fields.merchant ?? to,
    amount: fields.amount ?? settled,
    nonce: toBeHex(nonce, 32),
    target: upto ? X402_PERMIT2_PROXIES.upto : X402_PERMIT2_PROXIES.exact,
    data,
    gas: ITEM_GAS,
  };
}

/** The payer's approval of Permit2 on the token (x402's Permit2 payers approve once). */
async function approvePermit2(payerKey: string, amount: bigint): Promise<void> {
  const payer = new Wallet(payerKey, devnet.provider);
  // x402 payers hold no ETH: a little for the approval's gas
  if ((await devnet.provider.getBalance(payer.address)) < parseEther('0.1')) await devnet.setEthBalance(payer.address, parseEther('1'));
  await (await (devnet.usdc.connect(payer) as Contract).approve(PERMIT2, amount)).wait();
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
    expect(itemOutcomes(receipt.logs, treasury.address).get(itemKey(one.payer, one.nonce))).toEqual({
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
    const outcome = (i: number) => outcomes.get(itemKey(items[i].payer, items[i].nonce));
    // each settled item sees only its own fee, not the earlier items' (the undone ones logged nothing)
    const feeOf = (i: number) => ({ settled: true, toTreasury: [{ token: devnet.token.toLowerCase(), from: items[i].merchant.toLowerCase(), value: FEE }] });
    expect(outcome(0)).toEqual(feeOf(0));
    expect(outcome(1)).toMatchObject({ settled: false, stage: 'fee', reason: expect.stringContaining('allowance') });
    expect(outcome(2)).toMatchObject({ settled: false, stage: 'transfer', reason: expect.stringContaining('balance') });
    expect(outcome(3)).toMatchObject({ settled: false, stage: 'transfer', reason: expect.stringContaining('expired') });
    expect(outcome(4)).toEqual(feeOf(4));
    const after = await moneyState([poorMerchant.address, poorPayer.address]);
    // exactly two fees and two payments moved
    expect(after.balances[treasury.address]).toBe(before.balances[treasury.address] + 2n * FEE);
    expect(after.allowance).toBe(before.allowance - 2n * FEE);
    for (const failedItem of items.slice(1, 4)) expect(await devnet.usdc.authorizationState(failedItem.payer, failedItem.nonce)).toBe(false);
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
    expect(itemOutcomes(receipt.logs, treasury.address).get(itemKey(one.payer, one.nonce))).toMatchObject({ settled: false, stage: 'transfer', reason: expect.stringContaining('used or canceled') });
    expect(await moneyState()).toEqual(before);
  });
});

describe('settle, a Permit2 payment through x402\'s proxies', () => {
  const token = () => devnet.token.toLowerCase();

  it('collects the fee and settles an exact payment through the exact proxy in one transaction, fee first', async () => {
    const { payer, merchant, treasury } = devnet.accounts;
    const before = await moneyState();
    const one = await permit2Item({ value: usdc('2') });
    const receipt = await send(relayerKey(), [one]);
    expect(receipt.status).toBe(1);
    expect(itemOutcomes(receipt.logs, treasury.address).get(itemKey(one.payer, one.nonce))).toEqual({
      settled: true,
      toTreasury: [{ token: token(), from: merchant.address.toLowerCase(), value: FEE }],
    });
    const after = await moneyState();
    expect(after.balances[payer.address]).toBe(before.balances[payer.address] - usdc('2'));
    expect(after.balances[merchant.address]).toBe(before.balances[merchant.address] + usdc('2') - FEE);
    expect(after.balances[treasury.address]).toBe(before.balances[treasury.address] + FEE);
    const transfers = receipt.logs.filter((l) => l.address.toLowerCase() === token() && l.topics[0] === id('Transfer(address,address,uint256)'));
    expect(transfers.map((l) => '0x' + l.topics[1].slice(26))).toEqual([merchant.address.toLowerCase(), payer.address.toLowerCase()]);
  });

  it('settles an upto payment that names the treasury as its facilitator, for the amount settled; one that names a relayer is not settled and costs nothing', async () => {
    const { payer, merchant, treasury } = devnet.accounts;
    const before = await moneyState();
    const ours = await permit2Item({ value: usdc('3'), facilitator: treasury.address, settled: usdc('1') });
    // the upto proxy accepts only its witness's facilitator, and the executor calls it from the treasury's address
    const relayers = await permit2Item({ value: usdc('3'), facilitator: config.relayers[0], settled: usdc('1') });
    const receipt = await send(relayerKey(), [ours, relayers]);
    const outcomes = itemOutcomes(receipt.logs, treasury.address);
    expect(outcomes.get(itemKey(ours.payer, ours.nonce))).toMatchObject({ settled: true });
    expect(outcomes.get(itemKey(relayers.payer, relayers.nonce))).toMatchObject({ settled: false, stage: 'transfer', reason: expect.stringContaining('0x') });
    const after = await moneyState();
    expect(after.balances[payer.address]).toBe(before.balances[payer.address] - usdc('1'));
    expect(after.balances[merchant.address]).toBe(before.balances[merchant.address] + usdc('1') - FEE);
    expect(after.balances[treasury.address]).toBe(before.balances[treasury.address] + FEE);
  });

  it('undoes the fee with a call that pays the merchant less than the amount, or pays someone else', async () => {
    const { treasury } = devnet.accounts;
    const other = Wallet.createRandom().address;
    const items = [
      // the upto proxy moves 1 USDC where the item says the merchant must receive 2
      await permit2Item({ value: usdc('3'), facilitator: treasury.address, settled: usdc('1'), amount: usdc('2') }),
      // the exact proxy moves the permitted 1 USDC where the item says 1.5
      await permit2Item({ value: usdc('1'), amount: usdc('1.5') }),
      // a valid payment to another payee, charged to the merchant
      await permit2Item({ to: other, merchant: devnet.accounts.merchant.address }),
    ];
    const before = await moneyState([other]);
    const receipt = await send(relayerKey(), items);
    const outcomes = itemOutcomes(receipt.logs, treasury.address);
    for (const i of items) expect(outcomes.get(itemKey(i.payer, i.nonce))).toMatchObject({ settled: false, stage: 'transfer', reason: expect.stringContaining('less than the payment') });
    expect(await moneyState([other])).toEqual(before);
  });

  it('charges the merchant no fee when the payer revoked its approval of Permit2 before the batch, or invalidated the nonce', async () => {
    const { payer, treasury } = devnet.accounts;
    const revoked = await permit2Item();
    const invalidated = await permit2Item();
    // verified with the approval in place; the payer revokes it before the batch is mined
    await approvePermit2(payer.privateKey, 0n);
    try {
      const before = await moneyState();
      const receipt = await send(relayerKey(), [revoked]);
      expect(itemOutcomes(receipt.logs, treasury.address).get(itemKey(revoked.payer, revoked.nonce))).toMatchObject({ settled: false, stage: 'transfer' });
      expect(await moneyState()).toEqual(before);
    } finally {
      await approvePermit2(payer.privateKey, MaxUint256);
    }
    const nonce = BigInt(invalidated.nonce);
    const wallet = new Wallet(payer.privateKey, devnet.provider);
    await (await wallet.sendTransaction({ to: PERMIT2, data: permit2Interface.encodeFunctionData('invalidateUnorderedNonces', [nonce >> 8n, 1n << (nonce & 0xffn)]) })).wait();
    const before = await moneyState();
    const receipt = await send(relayerKey(), [invalidated]);
    expect(itemOutcomes(receipt.logs, treasury.address).get(itemKey(invalidated.payer, invalidated.nonce))).toMatchObject({ settled: false, stage: 'transfer' });
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
        for (const i of items) expect(await devnet.usdc.authorizationState(i.payer, i.nonce)).toBe(false);
      }),
      { numRuns: 12 },
    );
  });

  it('moves nothing for a relayer whose items are not validly signed payments, whatever their fields and calls', async () => {
    const { payer, merchant, treasury } = devnet.accounts;
    const address = fc.constantFrom(payer.address, merchant.address, treasury.address, executor, strangers[0].address, '0x0000000000000000000000000000000000000000');
    const word = fc.bigInt({ min: 0n, max: usdc('100') });
    const bytes = (max: number) => fc.uint8Array({ minLength: 0, maxLength: max }).map((b) => hexlify(b));
    const nonce = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => hexlify(b));
    const permit = fc.record({ permitted: fc.record({ token: fc.constantFrom(devnet.token, strangers[0].address), amount: word }), nonce: word, deadline: fc.bigInt({ min: 0n, max: 2n ** 40n }) });
    // every call an item could make: the allowed entry points with forged arguments, the token's other
    // functions, and anything at all to any address
    const call = fc.oneof(
      fc.tuple(address, address, word, fc.bigInt({ min: 0n, max: 2n ** 40n }), nonce, bytes(96)).map(([from, to, value, validBefore, n, signature]) => ({
        target: devnet.token,
        data: fiatToken.encodeFunctionData('transferWithAuthorization', [from, to, value, 0n, validBefore, n, signature]),
      })),
      fc.tuple(permit, address, address, bytes(96)).map(([p, owner, to, signature]) => ({
        target: X402_PERMIT2_PROXIES.exact,
        data: exactProxy.encodeFunctionData('settle', [p, owner, { to, validAfter: 0n }, signature]),
      })),
      fc.tuple(permit, word, address, address, bytes(96)).map(([p, amount, owner, to, signature]) => ({
        target: X402_PERMIT2_PROXIES.upto,
        data: uptoProxy.encodeFunctionData('settle', [p, amount, owner, { to, facilitator: treasury.address, validAfter: 0n }, signature]),
      })),
      fc.tuple(address, address, word).map(([from, to, value]) => ({ target: devnet.token, data: fiatToken.encodeFunctionData('transferFrom', [from, to, value]) })),
      fc.tuple(address, word).map(([to, value]) => ({ target: devnet.token, data: fiatToken.encodeFunctionData('transfer', [to, value]) })),
      fc.tuple(address, word).map(([spender, value]) => ({ target: devnet.token, data: fiatToken.encodeFunctionData('approve', [spender, value]) })),
      fc.tuple(fc.constantFrom(devnet.token, PERMIT2, X402_PERMIT2_PROXIES.exact, X402_PERMIT2_PROXIES.upto, treasury.address, executor, strangers[0].address), bytes(200)).map(([target, data]) => ({ target, data })),
    );
    const arbitraryItem = fc.record({
      payer: address,
      merchant: address,
      amount: word,
      nonce,
      call,
      gas: fc.bigInt({ min: 0n, max: 300_000n }),
    }).map(({ call: c, ...rest }): ExecutorItem => ({ ...rest, ...c }));
    await fc.assert(
      fc.asyncProperty(fc.array(arbitraryItem, { minLength: 1, maxLength: 4 }), async (items) => {
        const before = await moneyState([strangers[0].address]);
        const receipt = await send(relayerKey(), items);
        expect(receipt.status).toBe(1);
        const outcomes = [...itemOutcomes(receipt.logs, treasury.address).values()];
        expect(outcomes.every((o) => !o.settled)).toBe(true);
        expect(await moneyState([strangers[0].address])).toEqual(before);
        expect(await devnet.allowance(treasury.address, strangers[0].address)).toBe(0n);
      }),
      { numRuns: 40 },
    );
  });

  it('never calls anything but the token\'s transferWithAuthorization and the proxies\' settle: a relayer cannot make the treasury approve, transfer or call elsewhere', async () => {
    const { merchant, treasury } = devnet.accounts;
    const thief = strangers[2].address;
    // the treasury holds fees: a call of its own choosing would hand them over
    expect(await devnet.balanceOf(treasury.address)).toBeGreaterThan(0n);
    const real = await permit2Item();
    const calls = [
      { target: devnet.token, data: fiatToken.encodeFunctionData('transfer', [thief, 1n]) },
      { target: devnet.token, data: fiatToken.encodeFunctionData('approve', [thief, MaxUint256]) },
      { target: devnet.token, data: fiatToken.encodeFunctionData('transferFrom', [merchant.address, thief, FEE]) },
      // the payment's own calldata sent to another contract, and the proxy's calldata sent to the token
      { target: thief, data: real.data },
      { target: PERMIT2, data: permit2Interface.encodeFunctionData('invalidateUnorderedNonces', [0n, 1n]) },
      { target: devnet.token, data: real.data },
      { target: X402_PERMIT2_PROXIES.upto, data: real.data },
      { target: executor, data: '0x' },
    ];
    const items = calls.map((c, i): ExecutorItem => ({ ...real, ...c, nonce: toBeHex(i + 1, 32) }));
    const before = await moneyState([thief]);
    const receipt = await send(relayerKey(), items);
    const outcomes = itemOutcomes(receipt.logs, treasury.address);
    for (const i of items) expect(outcomes.get(itemKey(i.payer, i.nonce))).toMatchObject({ settled: false, stage: 'transfer', reason: expect.stringContaining('the executor may not call') });
    expect(await moneyState([thief])).toEqual(before);
    expect(await devnet.allowance(treasury.address, thief)).toBe(0n);
    // the real payment was never run: it still settles
    const settled = await send(relayerKey(), [real]);
    expect(itemOutcomes(settled.logs, treasury.address).get(itemKey(real.payer, real.nonce))).toMatchObject({ settled: true });
  });

  it('charges no fee for a validly signed payment smaller than the fee, even sent by a relayer (a leaked key cannot drain allowances)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: 0n, max: FEE - 1n }), async (value) => {
        const small = await item({ value });
        const before = await moneyState();
        const receipt = await send(relayerKey(), [small]);
        expect(itemOutcomes(receipt.logs, devnet.accounts.treasury.address).get(itemKey(small.payer, small.nonce))).toEqual({ settled: false, stage: 'fee', reason: 'the payment is smaller than the fee' });
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
        const direct = executorInterface.encodeFunctionData('settleOne', [itemTuple(one)]);
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

describe('a treasury that still delegates to the first executor (EIP-3009 items only)', () => {
  it('is not ready, says why, and is never sent an item; setting up deploys the current executor and delegates to it', async () => {
    const { treasury, relayers } = devnet.accounts;
    const sender = new Wallet(relayers[1].privateKey, devnet.provider);
    const factory = new ContractFactory(SETTLEMENT_EXECUTOR_V1_ARTIFACT.abi as never, SETTLEMENT_EXECUTOR_V1_ARTIFACT.bytecode, sender);
    const v1 = await (await factory.deploy(config.token, config.treasury, config.fee, [...config.relayers])).waitForDeployment();
    const v1Address = await v1.getAddress();
    const treasuryWallet = new Wallet(treasury.privateKey, devnet.provider);
    const auth = await treasuryWallet.authorize({ address: v1Address, nonce: await devnet.provider.getTransactionCount(treasury.address, 'pending'), chainId: devnet.chainId });
    await (await sender.sendTransaction({ type: 4, to: treasury.address, authorizationList: [auth] })).wait();

    expect(await executorStatus(devnet.provider, config)).toEqual({
      state: 'wrong_delegate',
      executor: v1Address.toLowerCase(),
      why: expect.stringContaining('an earlier version of the settlement executor'),
    });
    // a current item sent to it anyway moves nothing (its ABI has no such settle)
    const before = await moneyState();
    expect((await send(relayerKey(), [await permit2Item()])).status).toBe(0);
    expect(await moneyState()).toEqual(before);

    const status = await setUpExecutor(devnet.provider, config, { treasuryKey: treasury.privateKey, senderKey: relayers[1].privateKey });
    expect(status).toMatchObject({ state: 'ready' });
    expect((status as { executor: string }).executor).not.toBe(v1Address.toLowerCase());
    executor = (status as { executor: string }).executor;
    const one = await permit2Item();
    const receipt = await send(relayerKey(), [one]);
    expect(itemOutcomes(receipt.logs, treasury.address).get(itemKey(one.payer, one.nonce))).toMatchObject({ settled: true });
  });
});
