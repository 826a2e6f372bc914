// Attack (issue 24, custody): a relayer key read from a worker (environment, core dump, log). The worker holds
// no treasury key; the attacker holds a relayer key, its own USDC and ETH, and calls the treasury's delegated
// settlement executor directly, and the token. What can it do to a merchant? Measured on the real USDC.
import { Contract, Interface, Wallet, randomBytes, hexlify, id } from 'ethers';
import { itemOutcomes, itemKey, settleCalldata, type ExecutorItem } from '@facilitator/evm-executor';
import { setUpDevnetExecutor, startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { tokenSignature } from '@facilitator/evm-chain';
import { uptoPermit2, X402_UPTO_PERMIT2_PROXY } from '@facilitator/payment-mechanisms';
import { executorCallOf } from '../../packages/settlement/src/atomic/executor-item';
import { uptoSettleCalldata } from '../../packages/payment-mechanisms/src/upto-permit2/proxy-calldata';
import { approvePermit2, uptoRequest } from '../support/permit2-request';
import { abuseReport } from './abuse-report';

const FEE = 10_000n;
const ITEMS = 5;
const fiatToken = new Interface([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function transferFrom(address from, address to, uint256 value) returns (bool)',
]);

/** An EIP-3009 authorization as an executor item: the token's transferWithAuthorization, paying `to` at least `value`. */
function authorizationItem(a: { from: string; to: string; value: bigint; validAfter: bigint; validBefore: bigint; nonce: string }, signature: string): ExecutorItem {
  const data = fiatToken.encodeFunctionData('transferWithAuthorization', [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature]);
  return { payer: a.from, merchant: a.to, amount: a.value, nonce: a.nonce, target: devnet.token, data, gas: 200_000n };
}
let devnet: Devnet;

beforeAll(async () => {
  devnet = await startDevnet({ relayerCount: 2 });
  await setUpDevnetExecutor(devnet, FEE);
}, 60_000);
afterAll(() => devnet?.stop());

async function moneyOf(address: string) {
  const allowance = (await devnet.usdc.allowance(address, devnet.accounts.treasury.address)) as bigint;
  return { balance: await devnet.balanceOf(address), allowance };
}

it('a leaked relayer key moves no merchant balance; it spends an allowance only one fee per payment it funds itself', async () => {
  const report = abuseReport(
    'leaked-relayer-key',
    'A leaked relayer key',
    `the attacker holds a relayer key (not the treasury's), its own USDC and ETH, and calls the treasury's executor and the token directly: ${ITEMS} payments of exactly the fee to the merchant, forged items, an item calling the token's transferFrom, a transferFrom`,
  );
  const { merchant, treasury } = devnet.accounts;
  const relayer = new Wallet(devnet.accounts.relayers[0].privateKey, devnet.provider);
  const attacker = Wallet.createRandom();
  await devnet.mint(attacker.address, FEE * BigInt(ITEMS));
  const merchantBefore = await moneyOf(merchant.address);
  const attackerBefore = await devnet.balanceOf(attacker.address);

  // 1. payments the attacker signs and funds itself, of exactly the fee: the executor takes the merchant's fee with each
  const now = Math.floor(Date.now() / 1000);
  const items: ExecutorItem[] = [];
  for (let i = 0; i < ITEMS; i++) {
    const signed = await devnet.signTransferAuthorization(attacker.privateKey, { to: merchant.address, value: FEE, validBefore: BigInt(now + 3600) });
    items.push(authorizationItem(signed.authorization, signed.signature));
  }
  const receipt = (await (await relayer.sendTransaction({ to: treasury.address, data: settleCalldata(items) })).wait())!;
  const outcomes = itemOutcomes(receipt.logs, treasury.address);
  const settled = items.filter((i) => outcomes.get(itemKey(i.payer, i.nonce))?.settled).length;
  const merchantAfter = await moneyOf(merchant.address);
  const attackerSpent = attackerBefore - (await devnet.balanceOf(attacker.address));

  // 2. items naming the merchant's own money or a victim payer without its signature, and an item whose call
  // is the token's transferFrom of the merchant's funds (the executor runs as the treasury, the merchant's
  // spender): nothing moves
  const forgedFrom = Wallet.createRandom();
  await devnet.mint(forgedFrom.address, 10n ** 9n);
  const forgedAuthorization = { from: forgedFrom.address, to: attacker.address, value: 10n ** 9n, validAfter: 0n, validBefore: BigInt(now + 3600), nonce: hexlify(randomBytes(32)) };
  const forged = authorizationItem(forgedAuthorization, hexlify(randomBytes(65)));
  const fromMerchant = authorizationItem({ ...forgedAuthorization, from: merchant.address, nonce: hexlify(randomBytes(32)) }, hexlify(randomBytes(65)));
  const spendAllowance: ExecutorItem = { ...forged, nonce: hexlify(randomBytes(32)), data: fiatToken.encodeFunctionData('transferFrom', [merchant.address, attacker.address, 10n ** 6n]) };
  const beforeForged = { merchant: await moneyOf(merchant.address), victim: await devnet.balanceOf(forgedFrom.address) };
  const forgedReceipt = await relayer
    .sendTransaction({ to: treasury.address, data: settleCalldata([forged, fromMerchant, spendAllowance]), gasLimit: 1_000_000n })
    .then((tx) => tx.wait())
    .catch(() => null);
  const afterForged = { merchant: await moneyOf(merchant.address), victim: await devnet.balanceOf(forgedFrom.address) };

  // 3. the token directly: the relayer is nobody's spender
  const token = new Contract(devnet.token, ['function transferFrom(address,address,uint256) returns (bool)'], relayer);
  const direct = await token.transferFrom.staticCall(merchant.address, attacker.address, FEE).then(
    () => 'succeeded',
    () => 'reverted',
  );

  const ok = [
    report.check(`attacker's payments settled (each took the merchant's fee)`, ITEMS, settled),
    report.assert("merchant's token balance after them", 'not lower than before', (merchantAfter.balance - merchantBefore.balance).toString(), merchantAfter.balance >= merchantBefore.balance),
    report.check("merchant's allowance spent", `${FEE * BigInt(ITEMS)} (one fee per payment)`, `${merchantBefore.allowance - merchantAfter.allowance} (one fee per payment)`),
    report.check('what the attacker paid the merchant for it', (FEE * BigInt(ITEMS)).toString(), attackerSpent.toString()),
    report.check('forged items: merchant balance and allowance, victim balance', JSON.stringify(beforeForged, jsonBigint), JSON.stringify(afterForged, jsonBigint)),
    report.check('forged items settled', 0, forgedReceipt ? [...itemOutcomes(forgedReceipt.logs, treasury.address).values()].filter((o) => o.settled).length : 0),
    report.check("transferFrom of the merchant's funds by the relayer", 'reverted', direct),
  ];
  report.note(
    "Bound: a leaked relayer key can use up a merchant's fee allowance only by paying that merchant at least the fee per fee taken (the executor refuses smaller payments), so draining an allowance of A costs the attacker at least A, paid to the merchant; the merchant's balance never goes down. Beyond that the key spends only its own ETH on gas. Revoke it by re-running `executor setup` without it.",
  );
  report.save();
  expect(ok.every(Boolean)).toBe(true);
}, 120_000);

// Issue 40, item 7a (docs/decisions/abuse.md, "A leaked relayer key and `upto` amounts"): the leak tables say a
// relayer key with an upto payment's payload settles it for any amount from the fee to its maximum. Measured here.
it("a leaked relayer key with an upto payment's payload settles it for any amount from the fee to the payer's maximum, and no other", async () => {
  const MAXIMUM = 100_000n;
  const MIDDLE = 55_000n;
  const report = abuseReport(
    'leaked-relayer-key-upto',
    "A leaked relayer key and an upto payment's payload",
    `the attacker holds a relayer key (not the treasury's) and the signed payloads of unsettled upto payments of a maximum of ${MAXIMUM} naming our treasury as facilitator (as our verifications rows hold them), and calls the treasury's executor directly with items of its own amounts: above the maximum, below the fee (${FEE}), the fee, ${MIDDLE}, the maximum, and the settled payload again`,
  );
  const { merchant, treasury } = devnet.accounts;
  const relayer = new Wallet(devnet.accounts.relayers[1].privateKey, devnet.provider);
  const payer = Wallet.createRandom();
  await devnet.mint(payer.address, MAXIMUM * 3n);
  await approvePermit2(devnet, payer.privateKey);
  const network = { chainId: devnet.chainId, tokenAddress: devnet.token.toLowerCase() };
  const payment = async () => {
    const request = await uptoRequest(devnet, { payerKey: payer.privateKey, to: merchant.address, value: MAXIMUM });
    return uptoPermit2.parse(request.paymentPayload.payload, '/payload', network);
  };
  type Upto = Awaited<ReturnType<typeof payment>>;
  /** the item the worker makes of an upto payment settled for `amount` (executorItemOf): the mechanism's direct call as the executor may make it */
  const itemOf = (p: Upto, amount: bigint): ExecutorItem => {
    // above the maximum the mechanism refuses to build the call (amountToSettle): the attacker encodes it itself, with the same encoder
    const call =
      amount > p.terms.amount
        ? { to: X402_UPTO_PERMIT2_PROXY, data: uptoSettleCalldata(p.payload, amount, tokenSignature(p.payload.signature)), gasKind: 'x402UptoPermit2Proxy.settle' as const, sender: treasury.address }
        : uptoPermit2.evmExecution!.directCall(p, {} as never, { amount });
    const executorCall = executorCallOf(call, network, treasury.address);
    if (!executorCall) throw new Error('the executor may not make this call');
    return { payer: p.terms.payer, merchant: merchant.address, amount, nonce: p.terms.nonce.value, target: executorCall.to, data: executorCall.data, gas: 300_000n };
  };
  const balances = async () => ({ payer: await devnet.balanceOf(payer.address), merchant: await devnet.balanceOf(merchant.address), treasury: await devnet.balanceOf(treasury.address) });
  /** sends one item from the relayer; whether it settled and what moved (payer, merchant, treasury) */
  const attempt = async (p: Upto, amount: bigint) => {
    const before = await balances();
    const item = itemOf(p, amount);
    const receipt = await relayer
      .sendTransaction({ to: treasury.address, data: settleCalldata([item]), gasLimit: 1_000_000n })
      .then((tx) => tx.wait())
      .catch(() => null);
    const after = await balances();
    const outcome = receipt ? itemOutcomes(receipt.logs, treasury.address).get(itemKey(item.payer, item.nonce)) : undefined;
    const settled = outcome?.settled ?? false;
    // why it did not settle, as the worker reads it from the executor's NotSettled event
    const why = !receipt ? 'the transaction reverted' : !outcome ? 'no outcome logged' : outcome.settled ? 'settled' : `${outcome.stage}: ${named(outcome.reason)}`;
    return { settled, why, payer: after.payer - before.payer, merchant: after.merchant - before.merchant, treasury: after.treasury - before.treasury };
  };
  // the upto proxy's and Permit2's errors, by name (the worker's reader gives custom errors as selectors)
  const errors = ['AmountExceedsPermitted()', 'InvalidNonce()'];
  const named = (reason: string) => errors.reduce((r, e) => r.replace(`custom error ${id(e).slice(0, 10)}`, e), reason);
  const moved = (a: { payer: bigint; merchant: bigint; treasury: bigint }) => `payer ${a.payer}, merchant ${a.merchant}, treasury ${a.treasury}`;
  const nothing = moved({ payer: 0n, merchant: 0n, treasury: 0n });

  // one payment: above its maximum and below the fee first (nothing moves, its nonce stays unspent), then the fee itself
  const first = await payment();
  const above = await attempt(first, MAXIMUM + 1n);
  const below = await attempt(first, FEE - 1n);
  const atFee = await attempt(first, FEE);
  const again = await attempt(first, MAXIMUM);
  // two more payments: an amount in between, and the maximum
  const middle = await attempt(await payment(), MIDDLE);
  const atMaximum = await attempt(await payment(), MAXIMUM);
  const paidPerPayload = [[above, below, atFee, again], [middle], [atMaximum]].map((attempts) => attempts.reduce((paid, a) => paid - a.payer, 0n));

  const ok = [
    report.check(`amount ${MAXIMUM + 1n} (above the maximum ${MAXIMUM})`, 'not settled (transfer: AmountExceedsPermitted())', `${above.settled ? 'settled' : 'not settled'} (${above.why})`),
    report.check(`amount ${MAXIMUM + 1n}: what moved`, nothing, moved(above)),
    report.check(`amount ${FEE - 1n} (below the fee ${FEE})`, 'not settled (fee: the payment is smaller than the fee)', `${below.settled ? 'settled' : 'not settled'} (${below.why})`),
    report.check(`amount ${FEE - 1n}: what moved`, nothing, moved(below)),
    report.check(`amount ${FEE} (the fee), same payload: settled`, true, atFee.settled),
    report.check(`amount ${FEE}: what moved (the merchant receives the amount and pays the fee)`, moved({ payer: -FEE, merchant: 0n, treasury: FEE }), moved(atFee)),
    report.check(`the same payload again, for its maximum ${MAXIMUM} (its nonce is spent)`, 'not settled (transfer: InvalidNonce())', `${again.settled ? 'settled' : 'not settled'} (${again.why})`),
    report.check('the same payload again: what moved', nothing, moved(again)),
    report.check(`amount ${MIDDLE}, another payload: settled`, true, middle.settled),
    report.check(`amount ${MIDDLE}: what moved`, moved({ payer: -MIDDLE, merchant: MIDDLE - FEE, treasury: FEE }), moved(middle)),
    report.check(`amount ${MAXIMUM} (the maximum), another payload: settled`, true, atMaximum.settled),
    report.check(`amount ${MAXIMUM}: what moved`, moved({ payer: -MAXIMUM, merchant: MAXIMUM - FEE, treasury: FEE }), moved(atMaximum)),
    report.assert(
      'what the payer paid for each payload (the first over its four attempts)',
      `at most its maximum ${MAXIMUM}`,
      paidPerPayload.join(', '),
      paidPerPayload.every((paid) => paid <= MAXIMUM),
    ),
    report.assert(
      "merchant's balance after each attempt",
      'never lower than before it',
      [above, below, atFee, again, middle, atMaximum].map((a) => a.merchant).join(', '),
      [above, below, atFee, again, middle, atMaximum].every((a) => a.merchant >= 0n),
    ),
  ];
  report.note(
    "Bound, as README's and docs/custody.md's leak tables state it: with a relayer key and an unsettled upto payment's payload naming our treasury, anyone can settle it for any amount from the fee to the payer's maximum (both included): the payer pays that amount to the merchant, the merchant pays our fee; the merchant may get less than it asked for, and the nonce is spent. Above the maximum Permit2 refuses, below the fee the executor does; no one else is paid.",
  );
  report.save();
  expect(ok.every(Boolean)).toBe(true);
}, 120_000);

function jsonBigint(_key: string, value: unknown) {
  return typeof value === 'bigint' ? value.toString() : value;
}
