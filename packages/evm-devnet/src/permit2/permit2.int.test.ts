// Permit2 as the devnet places it behaves as the canonical one: its domain is the canonical address's, a
// transfer signed for it goes through once, a replay and a signature for another chain are refused. The
// x402 proxies' test doubles accept what @x402/evm's clients sign and enforce what the scheme specs say.
import { Contract, parseEther, Wallet } from 'ethers';
import { startDevnet, type Devnet } from '../devnet';
import { bytesToHex } from '@facilitator/core';
import { exactPermit2, permit2DomainSeparator, PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY } from '@facilitator/payment-mechanisms';

const PERMIT2_ABI = [
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function nonceBitmap(address owner, uint256 wordPos) view returns (uint256)',
  'function permitTransferFrom(((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit, (address to, uint256 requestedAmount) transferDetails, address owner, bytes signature)',
  'error InvalidNonce()',
  'error InvalidSigner()',
];
const PERMIT_TRANSFER_FROM_TYPES = {
  PermitTransferFrom: [
    { name: 'permitted', type: 'TokenPermissions' },
    { name: 'spender', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
  TokenPermissions: [
    { name: 'token', type: 'address' },
    { name: 'amount', type: 'uint256' },
  ],
};

let devnet: Devnet;
let permit2: Contract;

beforeAll(async () => {
  devnet = await startDevnet({ payerEth: parseEther('1') });
  permit2 = new Contract(PERMIT2_ADDRESS, PERMIT2_ABI, devnet.provider);
  // the payer lets Permit2 move its USDC, as an x402 Permit2 payer does once
  const payer = new Wallet(devnet.accounts.payer.privateKey, devnet.provider);
  await (await (devnet.usdc.connect(payer) as Contract).approve(PERMIT2_ADDRESS, 2n ** 256n - 1n)).wait();
});

afterAll(async () => {
  await devnet?.stop();
});

async function signed(nonce: bigint, amount: bigint, spender: string, chainId = devnet.chainId) {
  const payer = new Wallet(devnet.accounts.payer.privateKey);
  const permit = { permitted: { token: devnet.token, amount }, spender, nonce, deadline: 4_102_444_800n };
  const signature = await payer.signTypedData({ name: 'Permit2', chainId, verifyingContract: PERMIT2_ADDRESS }, PERMIT_TRANSFER_FROM_TYPES, permit);
  return { permit, signature };
}

it('sits at its canonical address with that address\'s domain separator for this chain', async () => {
  expect(await devnet.provider.getCode(PERMIT2_ADDRESS)).not.toBe('0x');
  expect(await permit2.DOMAIN_SEPARATOR()).toBe(bytesToHex(permit2DomainSeparator(devnet.chainId)));
});

it('moves a signed transfer once, marks its nonce, and refuses a replay and a signature for another chain', async () => {
  const spender = new Wallet(devnet.accounts.merchant.privateKey, devnet.provider);
  const recipient = Wallet.createRandom().address;
  const nonce = (5n << 8n) + 3n; // word 5, bit 3 of the payer's unordered nonces
  const { permit, signature } = await signed(nonce, 10_000n, spender.address);
  const asSpender = permit2.connect(spender) as Contract;
  const payerBefore = await devnet.balanceOf(devnet.accounts.payer.address);

  await (await asSpender.permitTransferFrom(permit, { to: recipient, requestedAmount: 10_000n }, devnet.accounts.payer.address, signature)).wait();
  expect(await devnet.balanceOf(recipient)).toBe(10_000n);
  expect(await devnet.balanceOf(devnet.accounts.payer.address)).toBe(payerBefore - 10_000n);
  expect(await permit2.nonceBitmap(devnet.accounts.payer.address, 5n)).toBe(1n << 3n);

  await expect(asSpender.permitTransferFrom.staticCall(permit, { to: recipient, requestedAmount: 10_000n }, devnet.accounts.payer.address, signature)).rejects.toMatchObject({
    revert: { name: 'InvalidNonce' },
  });
  const otherChain = await signed(nonce + 1n, 10_000n, spender.address, devnet.chainId + 1);
  await expect(asSpender.permitTransferFrom.staticCall(otherChain.permit, { to: recipient, requestedAmount: 10_000n }, devnet.accounts.payer.address, otherChain.signature)).rejects.toMatchObject({
    revert: { name: 'InvalidSigner' },
  });
});

describe("x402's Permit2 proxies at their canonical addresses", () => {
  // what @x402/evm's clients sign: the test doubles must accept exactly these
  const { permit2WitnessTypes, uptoPermit2WitnessTypes } = jest.requireActual<typeof import('@x402/evm')>('@x402/evm');
  const EXACT_ABI = [
    'function settle(((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit, address owner, (address to, uint256 validAfter) witness, bytes signature)',
    'event Settled()',
    'error PaymentTooEarly()',
    'error InvalidSigner()',
  ];
  const UPTO_ABI = [
    'function settle(((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit, uint256 amount, address owner, (address to, address facilitator, uint256 validAfter) witness, bytes signature)',
    'event Settled()',
    'error AmountExceedsPermitted()',
    'error UnauthorizedFacilitator()',
    'error InvalidAmount()',
    'error InvalidSigner()',
    'error InvalidNonce()',
  ];

  async function witnessSigned(spender: string, types: Readonly<Record<string, ReadonlyArray<{ readonly name: string; readonly type: string }>>>, witness: Record<string, unknown>, nonce: bigint, amount: bigint) {
    const payer = new Wallet(devnet.accounts.payer.privateKey);
    const permit = { permitted: { token: devnet.token, amount }, nonce, deadline: 4_102_444_800n };
    const fields = Object.fromEntries(Object.entries(types).map(([name, list]) => [name, list.map((f) => ({ ...f }))]));
    const signature = await payer.signTypedData({ name: 'Permit2', chainId: devnet.chainId, verifyingContract: PERMIT2_ADDRESS }, fields, { ...permit, spender, witness });
    return { permit, signature };
  }

  it('exact: anyone may send it; the whole amount goes to the signed recipient, never elsewhere, and not before validAfter', async () => {
    const relayer = new Wallet(devnet.accounts.relayers[0].privateKey, devnet.provider);
    const proxy = new Contract(X402_EXACT_PERMIT2_PROXY, EXACT_ABI, relayer);
    const recipient = Wallet.createRandom().address;
    const witness = { to: recipient, validAfter: 0n };
    const { permit, signature } = await witnessSigned(X402_EXACT_PERMIT2_PROXY, permit2WitnessTypes, witness, 901n, 20_000n);
    const owner = devnet.accounts.payer.address;

    // a facilitator that names another recipient has no signature for it
    await expect(proxy.settle.staticCall(permit, owner, { ...witness, to: relayer.address }, signature)).rejects.toMatchObject({ revert: { name: 'InvalidSigner' } });
    // the facilitator's own reading of the payload x402 would carry recovers the payer the chain accepts
    const body = { permit2Authorization: { from: owner, permitted: { token: devnet.token, amount: '20000' }, spender: X402_EXACT_PERMIT2_PROXY, nonce: '901', deadline: '4102444800', witness: { to: recipient, validAfter: '0' } }, signature };
    const parsed = exactPermit2.parse(body, '/payload', { chainId: devnet.chainId, tokenAddress: devnet.token.toLowerCase() });
    expect(exactPermit2.signature!.recoverSigner(exactPermit2.signature!.signedDigest(parsed.payload, permit2DomainSeparator(devnet.chainId)), parsed.signature)).toEqual({ ok: true, address: owner.toLowerCase() });
    const receipt = await (await proxy.settle(permit, owner, witness, signature)).wait();
    expect(await devnet.balanceOf(recipient)).toBe(20_000n);
    expect(receipt!.logs.some((log: { address: string; topics: readonly string[] }) => log.address.toLowerCase() === X402_EXACT_PERMIT2_PROXY && log.topics[0] === proxy.interface.getEvent('Settled')!.topicHash)).toBe(true);

    const later = await witnessSigned(X402_EXACT_PERMIT2_PROXY, permit2WitnessTypes, { to: recipient, validAfter: 4_000_000_000n }, 902n, 20_000n);
    await expect(proxy.settle.staticCall(later.permit, owner, { to: recipient, validAfter: 4_000_000_000n }, later.signature)).rejects.toMatchObject({ revert: { name: 'PaymentTooEarly' } });
  });

  it('upto: only the named facilitator sends it, for any amount up to the signed maximum, to the signed recipient', async () => {
    const facilitator = new Wallet(devnet.accounts.relayers[0].privateKey, devnet.provider);
    const stranger = new Wallet(devnet.accounts.relayers[1].privateKey, devnet.provider);
    const recipient = Wallet.createRandom().address;
    const witness = { to: recipient, facilitator: facilitator.address, validAfter: 0n };
    const { permit, signature } = await witnessSigned(X402_UPTO_PERMIT2_PROXY, uptoPermit2WitnessTypes, witness, 903n, 50_000n);
    const owner = devnet.accounts.payer.address;
    const asFacilitator = new Contract(X402_UPTO_PERMIT2_PROXY, UPTO_ABI, facilitator);

    await expect((asFacilitator.connect(stranger) as Contract).settle.staticCall(permit, 30_000n, owner, witness, signature)).rejects.toMatchObject({ revert: { name: 'UnauthorizedFacilitator' } });
    // the deployed proxy's order: the amount bound before the sender; nothing for a zero amount
    await expect((asFacilitator.connect(stranger) as Contract).settle.staticCall(permit, 50_001n, owner, witness, signature)).rejects.toMatchObject({ revert: { name: 'AmountExceedsPermitted' } });
    await expect(asFacilitator.settle.staticCall(permit, 0n, owner, witness, signature)).rejects.toMatchObject({ revert: { name: 'InvalidAmount' } });
    await expect(asFacilitator.settle.staticCall(permit, 50_001n, owner, witness, signature)).rejects.toMatchObject({ revert: { name: 'AmountExceedsPermitted' } });
    await (await asFacilitator.settle(permit, 30_000n, owner, witness, signature)).wait();
    expect(await devnet.provider.getStorage(X402_UPTO_PERMIT2_PROXY, 0)).toBe('0x' + '1'.padStart(64, '0'));
    expect(await devnet.balanceOf(recipient)).toBe(30_000n);
    // the nonce is spent: the rest of the maximum cannot be taken later with the same signature
    await expect(asFacilitator.settle.staticCall(permit, 20_000n, owner, witness, signature)).rejects.toMatchObject({ revert: { name: 'InvalidNonce' } });
  });
});
