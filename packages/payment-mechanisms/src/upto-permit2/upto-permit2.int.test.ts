// upto through Permit2 as settlement will ask it, against the devnet's Permit2 and its double of x402's upto
// proxy, read through UsdcClient as the worker reads the chain: the payer signs a maximum naming the
// facilitator; only that facilitator's direct call runs, for the smaller amount it names, once; its logs say
// what moved, and the search finds who ran it.
import { UsdcClient } from '@facilitator/evm-chain';
import { networkByChainId } from '@facilitator/core';
import { startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { uptoPermit2WitnessTypes } from '@x402/evm';
import { Contract, id, parseEther, Wallet, type TransactionReceipt } from 'ethers';
import { uptoPermit2 } from '.';
import { PERMIT2_ADDRESS, X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import { signPermit2 } from '../testing/permit2-signing';

let devnet: Devnet;
let chain: UsdcClient;
let facilitator: Wallet;
let stranger: Wallet;

beforeAll(async () => {
  devnet = await startDevnet({ payerEth: parseEther('1') });
  chain = new UsdcClient(devnet.provider, devnet.token);
  facilitator = new Wallet(devnet.accounts.relayers[0].privateKey, devnet.provider);
  stranger = new Wallet(devnet.accounts.relayers[1].privateKey, devnet.provider);
  // the payer lets Permit2 move its USDC, as an x402 Permit2 payer does once
  const payer = new Wallet(devnet.accounts.payer.privateKey, devnet.provider);
  await (await (devnet.usdc.connect(payer) as Contract).approve(PERMIT2_ADDRESS, 2n ** 256n - 1n)).wait();
});

afterAll(async () => {
  await devnet?.stop();
});

const network = () => ({ chainId: devnet.chainId, tokenAddress: devnet.token.toLowerCase() });

/** A payment of a maximum as @x402/evm's upto client signs it (its witness types), naming the facilitator, read by the mechanism. */
async function payment(nonce: bigint, maximum: bigint, payee = Wallet.createRandom().address) {
  const payer = new Wallet(devnet.accounts.payer.privateKey);
  const message = {
    permitted: { token: devnet.token, amount: maximum.toString() },
    spender: X402_UPTO_PERMIT2_PROXY,
    nonce: nonce.toString(),
    deadline: '4102444800',
    witness: { to: payee, facilitator: facilitator.address, validAfter: '0' },
  };
  const signature = await signPermit2(payer, devnet.chainId, uptoPermit2WitnessTypes, message);
  return uptoPermit2.parse({ permit2Authorization: { from: payer.address, ...message }, signature }, '/payload', network());
}

async function send(from: Wallet, call: { to: string; data: string }): Promise<TransactionReceipt> {
  return (await (await from.sendTransaction({ to: call.to, data: call.data })).wait())!;
}

/** how UsdcClient's estimate names a custom error the chain reverted with */
const customError = (signature: string) => ({ revert: `custom error ${id(signature).slice(0, 10)}` });

it('is available on the devnet: the upto proxy is there and names Permit2', async () => {
  expect(await uptoPermit2.availability!.unavailable(chain)).toBeUndefined();
});

it("executes by its facilitator's direct call once, for the amount ordered: that amount at the payee, the nonce spent, read back from the logs and found by the search", async () => {
  const p = await payment(0x4_00n + 7n, 250_000n);
  const payerBefore = await devnet.balanceOf(p.terms.payer);
  expect(await uptoPermit2.nonce!.isUsed(p.terms.nonce, chain)).toBe(false);
  expect(await uptoPermit2.evmExecution!.findExecution(p, chain)).toBeUndefined();
  expect(uptoPermit2.approval).toBeDefined();
  expect((await uptoPermit2.approval!.read(p, chain)).allowance).toBeGreaterThanOrEqual(p.terms.amount);

  const call = uptoPermit2.evmExecution!.directCall(p, chain, { amount: 150_000n });
  expect(call).toMatchObject({ to: X402_UPTO_PERMIT2_PROXY, sender: facilitator.address.toLowerCase(), gasKind: 'x402UptoPermit2Proxy.settle' });

  // anyone but the facilitator the payer named is refused by the proxy, before anything moves
  expect(await chain.estimate(stranger.address, call.data, call.to)).toMatchObject(customError('UnauthorizedFacilitator()'));
  await expect(send(stranger, call)).rejects.toThrow();
  expect(await uptoPermit2.nonce!.isUsed(p.terms.nonce, chain)).toBe(false);

  const receipt = await send(facilitator, call);
  expect(receipt.status).toBe(1);
  expect(await devnet.balanceOf(p.terms.payee)).toBe(150_000n);
  expect(await devnet.balanceOf(p.terms.payer)).toBe(payerBefore - 150_000n);
  // it shares the caps of transferWithAuthorization until GasCaps has an entry per kind: it must fit them
  expect(receipt.gasUsed).toBeLessThan(networkByChainId(84532)!.gasCaps.transfer);

  expect(await uptoPermit2.nonce!.isUsed(p.terms.nonce, chain)).toBe(true);
  expect(uptoPermit2.evmExecution!.paidIn(receipt.logs, p, network())).toBe(150_000n);
  expect(await uptoPermit2.evmExecution!.findExecution(p, chain)).toEqual({ txHash: receipt.hash, block: receipt.blockNumber, to: X402_UPTO_PERMIT2_PROXY, paidToPayee: 150_000n });

  // a second execution reverts (Permit2's InvalidNonce), even for the rest of the maximum
  const rest = uptoPermit2.evmExecution!.directCall(p, chain, { amount: 100_000n });
  expect(await chain.estimate(facilitator.address, rest.data, rest.to)).toMatchObject(customError('InvalidNonce()'));
  expect(await chain.estimate(facilitator.address, call.data, call.to)).toMatchObject(customError('InvalidNonce()'));
  await expect(send(facilitator, rest)).rejects.toThrow();
  expect(await devnet.balanceOf(p.terms.payee)).toBe(150_000n);
});

it('settles the whole maximum when that is the amount ordered, and finds it among the payer\'s other payments to the payee', async () => {
  const payee = Wallet.createRandom().address;
  const earlier = await payment(0x5_00n + 1n, 40_000n, payee);
  const ours = await payment(0x5_00n + 2n, 40_000n, payee);
  await send(facilitator, uptoPermit2.evmExecution!.directCall(earlier, chain, { amount: 39_999n }));
  const receipt = await send(facilitator, uptoPermit2.evmExecution!.directCall(ours, chain, { amount: 40_000n }));
  expect(await devnet.balanceOf(payee)).toBe(79_999n);
  expect(await uptoPermit2.evmExecution!.findExecution(ours, chain)).toEqual({ txHash: receipt.hash, block: receipt.blockNumber, to: X402_UPTO_PERMIT2_PROXY, paidToPayee: 40_000n });
  expect(await uptoPermit2.evmExecution!.findExecution(earlier, chain)).toMatchObject({ paidToPayee: 39_999n });
});
