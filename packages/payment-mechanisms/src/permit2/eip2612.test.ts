import { hexToBytes } from '@facilitator/core';
import { Interface, TypedDataEncoder, Wallet, type TypedDataField } from 'ethers';
import { x402ExactPermit2ProxyABI, x402UptoPermit2ProxyABI } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { declareEip2612GasSponsoringExtension } from '@x402/extensions';
import { approvalPermitProblem } from '../approval-permit';
import { exactPermit2 } from '../exact-permit2';
import type { PaymentReads } from '../chain-port';
import { approvalFor, missingApproval, type ApprovalPermit } from '../mechanism';
import { uptoPayment } from '../testing/permit2-chain';
import { ethersTypes, refusedPath } from '../testing/permit2-signing';
import { uptoPermit2 } from '../upto-permit2';
import { PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY } from './addresses';
import { eip2612PermitDigest } from './eip2612';

const CHAIN_ID = 84532;
const TOKEN = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const PAY_TO = '0x' + 'ab'.repeat(20);
const NETWORK = { chainId: CHAIN_ID, tokenAddress: TOKEN.toLowerCase() };
// any 32 bytes: the digest is checked against ethers under the same domain, and the domain is the token's
const TOKEN_DOMAIN = { name: 'USDC', version: '2', chainId: CHAIN_ID, verifyingContract: TOKEN };
const TOKEN_SEPARATOR = hexToBytes(TypedDataEncoder.hashDomain(TOKEN_DOMAIN));
const PAYER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const TOKEN_NONCE = 7n;

/** a viem typed-data request's types as ethers takes them: mutable copies, without the EIP712Domain entry */
const withoutDomain = (types: Record<string, readonly TypedDataField[]>) => ethersTypes(Object.fromEntries(Object.entries(types).filter(([name]) => name !== 'EIP712Domain')));

/**
 * What `@x402/evm`'s own exact client sends for a Permit2 payment when the server declares
 * `eip2612GasSponsoring` and the payer's allowance to Permit2 is short: the payment and its extensions, and
 * the typed data it signed the permit with (its own types, captured as it hands them to the signer).
 */
async function clientPayment(allowance = 0n) {
  const wallet = new Wallet(PAYER_KEY);
  type Typed = { primaryType: string; domain: Record<string, unknown>; types: Record<string, readonly TypedDataField[]>; message: Record<string, unknown> };
  const signed: Typed[] = [];
  // the client's signer port (viem's account shape), signing with ethers
  const signer = {
    address: wallet.address as `0x${string}`,
    signTypedData: (args: Typed) => {
      signed.push(args);
      const types = withoutDomain(args.types);
      return wallet.signTypedData(args.domain as never, types, args.message);
    },
    readContract: async ({ functionName }: { functionName: string }) => (functionName === 'nonces' ? TOKEN_NONCE : allowance),
  };
  const requirements = {
    scheme: 'exact',
    network: `eip155:${CHAIN_ID}`,
    asset: TOKEN,
    amount: '10000',
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    extra: { name: 'USDC', version: '2', assetTransferMethod: 'permit2' },
  } as const;
  const declared = declareEip2612GasSponsoringExtension();
  const created = await new ExactEvmScheme(signer as never).createPaymentPayload(2, requirements as never, { extensions: declared } as never);
  // as @x402/core's client merges them: the server's declaration, then the client's fields over it
  const extensions = created.extensions
    ? { eip2612GasSponsoring: { ...declared.eip2612GasSponsoring, info: { ...declared.eip2612GasSponsoring.info, ...(created.extensions.eip2612GasSponsoring as { info: object }).info } } }
    : declared;
  return { payer: wallet.address.toLowerCase(), payload: created.payload, extensions, permitSigned: signed.find((s) => s.primaryType === 'Permit') };
}

const reads = (allowance: bigint, nonce = TOKEN_NONCE): PaymentReads => ({
  isAuthorizationUsed: async () => false,
  readContract: async (_to, data) => '0x' + (data.startsWith('0x7ecebe00') ? nonce : allowance).toString(16).padStart(64, '0'),
});

describe("x402's eip2612GasSponsoring: the payer's EIP-2612 permit for Permit2", () => {
  it("reads the permit @x402/evm's client sends, and hashes it as the client's own Permit types do", async () => {
    const { payer, payload, extensions, permitSigned } = await clientPayment();
    const parsed = exactPermit2.parse(payload, '/paymentPayload/payload', NETWORK, extensions);
    const permit = exactPermit2.approval!.permit!(parsed.payload)!;
    expect(permit).toEqual({
      owner: payer,
      token: NETWORK.tokenAddress,
      spender: PERMIT2_ADDRESS,
      value: 10000n,
      nonce: TOKEN_NONCE,
      deadline: parsed.payload.deadline,
      signature: expect.stringMatching(/^0x[0-9a-f]{130}$/),
    });
    expect(permitSigned).toBeDefined();
    const { domain, types, message } = permitSigned!;
    const own = withoutDomain(types);
    expect(Buffer.from(eip2612PermitDigest(hexToBytes(TypedDataEncoder.hashDomain(domain as never)), permit)).toString('hex')).toBe(
      TypedDataEncoder.hash(domain as never, own, message).slice(2),
    );
    expect(approvalPermitProblem(exactPermit2.approval!, permit, parsed.terms, TOKEN_SEPARATOR, 1_000n, 6n)).toBeUndefined();
  });

  it('is no permit when the extensions only echo the server\'s declaration (the payer\'s allowance sufficed)', async () => {
    const { payload, extensions } = await clientPayment(10n ** 18n);
    expect(extensions.eip2612GasSponsoring.info).not.toHaveProperty('signature');
    const parsed = exactPermit2.parse(payload, '/paymentPayload/payload', NETWORK, extensions);
    expect(exactPermit2.approval!.permit!(parsed.payload)).toBeUndefined();
    // stored as before, byte for byte
    expect(exactPermit2.toStored(parsed.payload)).not.toHaveProperty('extensions');
  });

  it('is stored with the payment and read back the same, on both proxies', async () => {
    const { payload, extensions } = await clientPayment();
    const parsed = exactPermit2.parse(payload, '/paymentPayload/payload', NETWORK, extensions);
    const stored = JSON.parse(JSON.stringify(exactPermit2.toStored(parsed.payload)));
    expect(exactPermit2.fromStored(stored, NETWORK)).toEqual(parsed);
    const upto = uptoPayment();
    const withPermit = { ...upto.payload, permit: parsed.payload.permit };
    expect(uptoPermit2.fromStored(JSON.parse(JSON.stringify(uptoPermit2.toStored(withPermit))), NETWORK).payload).toEqual(withPermit);
  });

  it('names the path of a field that is not what it must be', async () => {
    const { payload, extensions } = await clientPayment();
    const broken = { eip2612GasSponsoring: { info: { ...extensions.eip2612GasSponsoring.info, signature: '0x' + '11'.repeat(64) } } };
    expect(refusedPath(() => exactPermit2.parse(payload, '/paymentPayload/payload', NETWORK, broken))).toBe('/paymentPayload/extensions/eip2612GasSponsoring/info/signature');
  });

  it("refuses a permit from someone else, for another token or spender, expired, for another amount, or not signed by its owner", async () => {
    const { payload, extensions } = await clientPayment();
    const parsed = exactPermit2.parse(payload, '/paymentPayload/payload', NETWORK, extensions);
    const permit = exactPermit2.approval!.permit!(parsed.payload)!;
    const problem = (p: Partial<ApprovalPermit>, now = 1_000n) => approvalPermitProblem(exactPermit2.approval!, { ...permit, ...p }, parsed.terms, TOKEN_SEPARATOR, now, 6n)?.field;
    expect(problem({ owner: '0x' + '12'.repeat(20) })).toBe('owner');
    expect(problem({ token: '0x' + '13'.repeat(20) })).toBe('token');
    expect(problem({ spender: X402_EXACT_PERMIT2_PROXY })).toBe('spender');
    expect(problem({}, permit.deadline - 5n)).toBe('deadline');
    // a permit that lapses before the payment could leave a fee taken and the transfer refused
    expect(problem({ deadline: parsed.terms.validBefore - 2n })).toBe('deadline');
    expect(problem({ value: 9_999n })).toBe('value');
    // the proxy reverts Permit2612AmountMismatch on any other value than the permitted amount
    expect(problem({ value: 10_001n })).toBe('value');
    expect(problem({ nonce: TOKEN_NONCE + 1n })).toBe('signature');
    expect(approvalPermitProblem(exactPermit2.approval!, permit, parsed.terms, hexToBytes('0x' + '00'.repeat(32)), 1_000n, 6n)?.field).toBe('signature');
  });

  it("counts the approval the permit sets when the payer's allowance is short and its nonce is the token's next", async () => {
    const { payload, extensions } = await clientPayment();
    const parsed = exactPermit2.parse(payload, '/paymentPayload/payload', NETWORK, extensions);
    expect(await missingApproval(exactPermit2, parsed, reads(0n))).toBeUndefined();
    // its nonce was used (or another permit's was): the token would refuse it
    expect(await missingApproval(exactPermit2, parsed, reads(0n, TOKEN_NONCE + 1n))).toMatchObject({ allowance: 0n, required: 10000n });
    const approval = await exactPermit2.approval!.read(parsed, reads(5n));
    expect(approvalFor(approval, 10000n)).toEqual({ allowance: 10000n, withPermit: true });
    // an allowance that covers the payment is used as it is: the permit would overwrite it
    expect(approvalFor(await exactPermit2.approval!.read(parsed, reads(10n ** 18n)), 10000n)).toEqual({ allowance: 10n ** 18n, withPermit: false });
  });

  it("sends it with the payment as the proxies' settleWithPermit, as @x402/evm's ABI encodes it", async () => {
    const { payload, extensions } = await clientPayment();
    const parsed = exactPermit2.parse(payload, '/paymentPayload/payload', NETWORK, extensions);
    const permit = parsed.payload.permit!;
    const sig = permit.signature.slice(2);
    const permit2612 = { value: permit.value, deadline: permit.deadline, r: '0x' + sig.slice(0, 64), s: '0x' + sig.slice(64, 128), v: parseInt(sig.slice(128), 16) };
    const p = parsed.payload;
    const args = [{ permitted: { token: p.token, amount: p.amount }, nonce: p.nonce, deadline: p.deadline }, p.from, { to: p.to, validAfter: p.validAfter }, p.signature];
    const call = exactPermit2.evmExecution!.directCall(parsed, {} as never, { amount: p.amount, withPermit: true });
    expect(call).toEqual({
      to: X402_EXACT_PERMIT2_PROXY,
      data: new Interface(x402ExactPermit2ProxyABI as never).encodeFunctionData('settleWithPermit', [permit2612, ...args]),
      gasKind: 'x402ExactPermit2Proxy.settleWithPermit',
    });
    // without the order, the call is settle, as before
    expect(exactPermit2.evmExecution!.directCall(parsed, {} as never).data).toBe(new Interface(x402ExactPermit2ProxyABI as never).encodeFunctionData('settle', args));

    const upto = { ...uptoPayment(), payload: { ...uptoPayment().payload, permit } };
    const u = upto.payload;
    const uptoArgs = [{ permitted: { token: u.token, amount: u.amount }, nonce: u.nonce, deadline: u.deadline }, 7n, u.from, { to: u.to, facilitator: u.facilitator, validAfter: u.validAfter }, u.signature];
    expect(uptoPermit2.evmExecution!.directCall(upto, {} as never, { amount: 7n, withPermit: true }).data).toBe(
      new Interface(x402UptoPermit2ProxyABI as never).encodeFunctionData('settleWithPermit', [permit2612, ...uptoArgs]),
    );
    // a payment without a permit cannot be sent with one
    expect(() => uptoPermit2.evmExecution!.directCall(uptoPayment(), {} as never, { amount: 7n, withPermit: true })).toThrow(/carries none/);
  });
});
