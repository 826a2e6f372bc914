// Attack (issue 24, custody): a relayer key read from a worker (environment, core dump, log). The worker holds
// no treasury key; the attacker holds a relayer key, its own USDC and ETH, and calls the treasury's delegated
// settlement executor directly, and the token. What can it do to a merchant? Measured on the real USDC.
import { Contract, Interface, Wallet, randomBytes, hexlify } from 'ethers';
import { itemOutcomes, itemKey, settleCalldata, type ExecutorItem } from '@facilitator/settlement-contract';
import { setUpDevnetExecutor, startDevnet, type Devnet } from '@facilitator/devnet';
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

function jsonBigint(_key: string, value: unknown) {
  return typeof value === 'bigint' ? value.toString() : value;
}
