// x402's `eip2612GasSponsoring` end to end: a merchant's Express app behind the real @x402/express middleware
// asks for `exact` through Permit2 and declares the extension (@x402/extensions); a payer that NEVER approved
// Permit2 pays through the real @x402/fetch client, whose @x402/evm client reads its allowance over RPC, finds
// it short and signs an EIP-2612 permit for Permit2 beside the Permit2 payment. Our service verifies the
// permit and settles with the proxy's settleWithPermit: the permit, then the payment, in one transaction,
// after the fee. Then the abuse side: permits that do not give what the payment needs are refused at verify,
// and nothing is sent. Anvil with Circle's USDC, the real Permit2 and the proxy doubles.
import express from 'express';
import { Contract, getAddress, Interface, Wallet, type BaseWallet } from 'ethers';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { x402ExactPermit2ProxyABI } from '@x402/evm';
import { declareEip2612GasSponsoringExtension } from '@x402/extensions';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY, EXACT_PERMIT2 } from '@facilitator/payment-mechanisms';
import { permit2Request } from './support/permit2-request';
import { balances, difference, transfersOnChain } from './support/chain-actions';
import { LocalServers } from './support/local-servers';
import { startTestStack, type TestStack } from './support/test-stack';

const FEE = 10_000n;
const PRICE = 50_000n;
const CONTENT = { forecast: 'sunny', temperature: 21 };
const TOKEN_ABI = ['function allowance(address,address) view returns (uint256)', 'function nonces(address) view returns (uint256)'];
const PERMIT_TYPES = {
  Permit: [
    { name: 'owner', type: 'address' },
    { name: 'spender', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
};

let stack: TestStack;
const servers = new LocalServers();
let merchantUrl: string;
let token: Contract;

beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
  token = new Contract(stack.devnet.token, TOKEN_ABI, stack.devnet.provider);
  const facilitatorUrl = `${await servers.listen(stack.api.app)}/x402`;
  const asset = getAddress(stack.devnet.token) as `0x${string}`;
  const payTo = getAddress(stack.devnet.accounts.merchant.address);
  const merchant = express();
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register('eip155:84532', new ExactEvmServerScheme());
  merchant.use(
    paymentMiddleware(
      {
        'GET /forecast': {
          accepts: {
            scheme: 'exact',
            network: 'eip155:84532',
            payTo,
            price: { amount: PRICE.toString(), asset, extra: { assetTransferMethod: 'permit2', name: 'USDC', version: '2' } },
          },
          description: 'the forecast, paid through Permit2 with the gas of the approval sponsored',
          extensions: { ...declareEip2612GasSponsoringExtension() },
        },
      },
      resourceServer,
    ),
  );
  merchant.get('/forecast', (_req, res) => {
    res.json(CONTENT);
  });
  merchantUrl = await servers.listen(merchant);
});

afterAll(async () => {
  await servers.close();
  await stack?.stop();
});

const ourSenders = () => [stack.devnet.accounts.treasury.address, ...stack.devnet.accounts.relayers.map((r) => r.address)];
async function sentBy(addresses: string[]): Promise<number> {
  const counts = await Promise.all(addresses.map((a) => stack.devnet.provider.getTransactionCount(a, 'latest')));
  return counts.reduce((a, b) => a + b, 0);
}

describe('eip2612GasSponsoring: @x402/express + @x402/fetch with our facilitator', () => {
  it('a payer that never approved Permit2 pays: one fee and one payment on chain, its approval set by its permit in the same transaction', async () => {
    const { devnet } = stack;
    const payer = devnet.accounts.payer.address;
    expect(await token.allowance(payer, PERMIT2_ADDRESS)).toBe(0n);
    const permitNonce: bigint = await token.nonces(payer);
    const account = privateKeyToAccount(devnet.accounts.payer.privateKey as `0x${string}`);
    // the client reads its allowance to Permit2 and the token's permit nonce over this RPC
    const buyer = new x402Client()
      .register('eip155:*', new ExactEvmClientScheme(account, { rpcUrl: devnet.rpcUrl }))
      .setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: getAddress(devnet.token), maxAmountPerPayment: '1000000' }] });
    const fetchWithPayment = wrapFetchWithPayment(fetch, buyer);
    const fromBlock = await devnet.provider.getBlockNumber();
    const before = await balances(devnet);

    const res = await fetchWithPayment(`${merchantUrl}/forecast`);
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: CONTENT });
    expect(difference(await balances(devnet), before)).toEqual({ payer: -PRICE, merchant: PRICE - FEE, treasury: FEE });
    expect(await transfersOnChain(devnet, fromBlock + 1, devnet.accounts.merchant.address, devnet.accounts.treasury.address)).toBe(1);
    expect(await transfersOnChain(devnet, fromBlock + 1, payer, devnet.accounts.merchant.address)).toBe(1);

    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const settlement = await stack.db.prisma.settlement.findFirstOrThrow({ where: { settlementTxHash: receipt.transaction } });
    expect(settlement).toMatchObject({ state: 'settled', mechanism: EXACT_PERMIT2, amount: PRICE.toString(), feeAmount: FEE.toString() });
    // the permit is stored with the payment, in the extension's own fields
    expect(settlement.payload).toMatchObject({ extensions: { eip2612GasSponsoring: { info: { from: payer.toLowerCase(), spender: PERMIT2_ADDRESS, amount: PRICE.toString() } } } });

    // one transaction: the proxy's settleWithPermit, whose permit set the payer's approval of Permit2 (the
    // token's Approval to Permit2 for the price), which the payment then spent
    const tx = (await devnet.provider.getTransaction(receipt.transaction))!;
    const proxy = new Interface(x402ExactPermit2ProxyABI as never);
    expect(tx.to!.toLowerCase()).toBe(X402_EXACT_PERMIT2_PROXY);
    expect(proxy.parseTransaction({ data: tx.data })?.name).toBe('settleWithPermit');
    const mined = (await devnet.provider.getTransactionReceipt(receipt.transaction))!;
    const approvals = mined.logs
      .filter((l) => l.address.toLowerCase() === devnet.token.toLowerCase())
      .map((l) => new Interface(['event Approval(address indexed owner, address indexed spender, uint256 value)']).parseLog(l))
      .filter((e) => e?.name === 'Approval');
    expect(approvals.map((e) => [e!.args.owner.toLowerCase(), e!.args.spender, e!.args.value])).toContainEqual([payer.toLowerCase(), getAddress(PERMIT2_ADDRESS), PRICE]);
    expect(await token.nonces(payer)).toBe(permitNonce + 1n);
    expect(await token.allowance(payer, PERMIT2_ADDRESS)).toBe(0n);
  });
});

describe('eip2612GasSponsoring abuse: a permit that does not give what the payment needs is refused at verify, and nothing is sent', () => {
  /** A payer that holds USDC and never approved Permit2, and a Permit2 payment of it with an EIP-2612 permit of `permit`'s fields. */
  async function sponsoredRequest(permit: { owner?: string; spender?: string; value?: bigint; deadline?: bigint; signer?: BaseWallet } = {}) {
    const { devnet } = stack;
    const payer = Wallet.createRandom();
    await devnet.mint(payer.address, PRICE);
    const body = await permit2Request(devnet, { payerKey: payer.privateKey, to: devnet.accounts.merchant.address, value: PRICE });
    const owner = permit.owner ?? payer.address;
    const fields = {
      owner,
      spender: permit.spender ?? PERMIT2_ADDRESS,
      value: permit.value ?? PRICE,
      nonce: await token.nonces(owner),
      deadline: permit.deadline ?? BigInt(Math.floor(Date.now() / 1000) + 300),
    };
    const domain = { name: 'USDC', version: '2', chainId: devnet.chainId, verifyingContract: devnet.token };
    const signature = await (permit.signer ?? payer).signTypedData(domain, PERMIT_TYPES, fields);
    const info = {
      from: fields.owner,
      asset: devnet.token,
      spender: fields.spender,
      amount: fields.value.toString(),
      nonce: fields.nonce.toString(),
      deadline: fields.deadline.toString(),
      signature,
      version: '1',
    };
    return { ...body, paymentPayload: { ...body.paymentPayload, extensions: { eip2612GasSponsoring: { info } } } };
  }

  it('verifies a good one (the control)', async () => {
    const body = await sponsoredRequest();
    const verify = await stack.http.post('/x402/verify').send(body);
    expect(verify.body).toMatchObject({ isValid: true });
  });

  it.each([
    ['from someone else (signed by another key for another owner)', () => ({ owner: stack.devnet.accounts.merchant.address, signer: new Wallet(stack.devnet.accounts.merchant.privateKey) }), 'eip2612_from_mismatch'],
    ['for another spender (the proxy instead of Permit2)', () => ({ spender: X402_EXACT_PERMIT2_PROXY }), 'eip2612_spender_not_permit2'],
    ['expired', () => ({ deadline: BigInt(Math.floor(Date.now() / 1000) - 1) }), 'eip2612_deadline_expired'],
    ['for a lower amount than the payment', () => ({ value: PRICE - 1n }), 'permit2_2612_amount_mismatch'],
    ['not signed by its owner', () => ({ signer: Wallet.createRandom() }), 'permit2_allowance_required'],
  ])('a permit %s', async (_case, fields, reason) => {
    const body = await sponsoredRequest(fields());
    const sent = await sentBy(ourSenders());
    const verify = await stack.http.post('/x402/verify').send(body);
    expect(verify.body).toMatchObject({ isValid: false, invalidReason: reason });
    const settle = await stack.http.post('/x402/settle').send(body);
    expect(settle.body).toMatchObject({ success: false, errorReason: reason });
    expect(await sentBy(ourSenders())).toBe(sent);
  });
});
