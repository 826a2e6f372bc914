// Permit2 as the devnet places it behaves as the canonical one: its domain is the canonical address's, a
// transfer signed for it goes through once, a replay and a signature for another chain are refused.
import { Contract, parseEther, Wallet } from 'ethers';
import { startDevnet, type Devnet } from '../devnet';
import { permit2DomainSeparator, PERMIT2_ADDRESS } from './install-permit2';

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
  expect(await permit2.DOMAIN_SEPARATOR()).toBe(permit2DomainSeparator(devnet.chainId));
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
