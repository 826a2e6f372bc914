// exact through Permit2 as settlement asks it, against the devnet's Permit2 and its double of x402's exact
// proxy, read through UsdcClient as the worker reads the chain: the nonce is free until the direct call runs,
// that call moves the amount to the payee once, its logs say so, and the search finds who ran it.
import { UsdcClient } from '@facilitator/evm-chain';
import { networkByChainId } from '@facilitator/core';
import { startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { permit2WitnessTypes } from '@x402/evm';
import { Contract, parseEther, Wallet, type TransactionReceipt } from 'ethers';
import { exactPermit2 } from '.';
import { PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY } from '../permit2/addresses';

let devnet: Devnet;
let chain: UsdcClient;
let relayer: Wallet;
let stranger: Wallet;

beforeAll(async () => {
  devnet = await startDevnet({ payerEth: parseEther('1') });
  chain = new UsdcClient(devnet.provider, devnet.token);
  relayer = new Wallet(devnet.accounts.relayers[0].privateKey, devnet.provider);
  stranger = new Wallet(devnet.accounts.relayers[1].privateKey, devnet.provider);
  // the payer lets Permit2 move its USDC, as an x402 Permit2 payer does once
  const payer = new Wallet(devnet.accounts.payer.privateKey, devnet.provider);
  await (await (devnet.usdc.connect(payer) as Contract).approve(PERMIT2_ADDRESS, 2n ** 256n - 1n)).wait();
});

afterAll(async () => {
  await devnet?.stop();
});

/** A payment as an x402 client signs it (@x402/evm's witness types), read by the mechanism. */
async function payment(nonce: bigint, amount: bigint, payee = Wallet.createRandom().address) {
  const payer = new Wallet(devnet.accounts.payer.privateKey);
  const message = {
    permitted: { token: devnet.token, amount: amount.toString() },
    spender: X402_EXACT_PERMIT2_PROXY,
    nonce: nonce.toString(),
    deadline: '4102444800',
    witness: { to: payee, validAfter: '0' },
  };
  const types = Object.fromEntries(Object.entries(permit2WitnessTypes).map(([name, fields]) => [name, fields.map((f) => ({ ...f }))]));
  const signature = await payer.signTypedData({ name: 'Permit2', chainId: devnet.chainId, verifyingContract: PERMIT2_ADDRESS }, types, message);
  return exactPermit2.parse({ permit2Authorization: { from: payer.address, ...message }, signature }, '/payload', network());
}

const network = () => ({ chainId: devnet.chainId, tokenAddress: devnet.token.toLowerCase() });

async function send(from: Wallet, call: { to: string; data: string }): Promise<TransactionReceipt> {
  return (await (await from.sendTransaction({ to: call.to, data: call.data })).wait())!;
}

it('executes by its direct call once: the nonce spent, the amount at the payee, read back from the logs and found by the search', async () => {
  const p = await payment(0x1_00n + 7n, 250_000n);
  const payerBefore = await devnet.balanceOf(p.terms.payer);
  expect(await exactPermit2.nonce!.isUsed(p.terms.nonce, chain)).toBe(false);
  expect(await exactPermit2.evmExecution!.findExecution(p, chain)).toBeUndefined();

  const call = exactPermit2.evmExecution!.directCall(p, chain);
  expect(call.to).toBe(X402_EXACT_PERMIT2_PROXY);
  const receipt = await send(relayer, call);
  expect(receipt.status).toBe(1);
  expect(await devnet.balanceOf(p.terms.payee)).toBe(250_000n);
  expect(await devnet.balanceOf(p.terms.payer)).toBe(payerBefore - 250_000n);
  // it shares the caps of transferWithAuthorization until GasCaps has an entry per kind: it must fit them
  expect(receipt.gasUsed).toBeLessThan(networkByChainId(84532)!.gasCaps.transfer);

  expect(await exactPermit2.nonce!.isUsed(p.terms.nonce, chain)).toBe(true);
  expect(exactPermit2.evmExecution!.paidIn(receipt.logs, p, network())).toBe(250_000n);
  expect(await exactPermit2.evmExecution!.findExecution(p, chain)).toEqual({
    txHash: receipt.hash,
    block: receipt.blockNumber,
    to: X402_EXACT_PERMIT2_PROXY,
    paidToPayee: 250_000n,
  });

  // a second execution reverts (Permit2's InvalidNonce): an estimate refuses it before anything is sent
  expect(await chain.estimate(relayer.address, call.data, call.to)).toMatchObject({ revert: expect.any(String) });
  await expect(send(stranger, call)).rejects.toThrow();
  expect(await devnet.balanceOf(p.terms.payee)).toBe(250_000n);
});

it("finds a stranger's execution among the payer's other payments to the same payee", async () => {
  const payee = Wallet.createRandom().address;
  const earlier = await payment(0x2_00n + 1n, 40_000n, payee);
  const ours = await payment(0x2_00n + 2n, 40_000n, payee);
  await send(relayer, exactPermit2.evmExecution!.directCall(earlier, chain));
  const theirs = await send(stranger, exactPermit2.evmExecution!.directCall(ours, chain));
  expect(await exactPermit2.evmExecution!.findExecution(ours, chain)).toEqual({ txHash: theirs.hash, block: theirs.blockNumber, to: X402_EXACT_PERMIT2_PROXY, paidToPayee: 40_000n });
});

it('finds no execution of a nonce the payer invalidated: spent, but nothing paid', async () => {
  const p = await payment(0x3_00n + 5n, 10_000n);
  const payer = new Wallet(devnet.accounts.payer.privateKey, devnet.provider);
  const permit2 = new Contract(PERMIT2_ADDRESS, ['function invalidateUnorderedNonces(uint256 wordPos, uint256 mask)'], payer);
  await (await permit2.invalidateUnorderedNonces(3n, 1n << 5n)).wait();
  expect(await exactPermit2.nonce!.isUsed(p.terms.nonce, chain)).toBe(true);
  expect(await exactPermit2.evmExecution!.findExecution(p, chain)).toBeUndefined();
  expect(await chain.estimate(relayer.address, exactPermit2.evmExecution!.directCall(p, chain).data, X402_EXACT_PERMIT2_PROXY)).toMatchObject({ revert: expect.any(String) });
});
