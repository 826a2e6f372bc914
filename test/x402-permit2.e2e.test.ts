// `exact` through Permit2 end to end: a merchant's Express app behind the real @x402/express middleware,
// with `extra.assetTransferMethod: "permit2"` in its requirements, paid by the real @x402/fetch client
// (@x402/evm 2.27 signs a Permit2 witness transfer for x402's exact proxy), settled by our service against
// anvil with Circle's USDC, the real Permit2 and the proxy doubles at their canonical addresses. The payer
// approved Permit2 once, as a Permit2 payer does; the fee comes first, then the payment, each once.
import express from 'express';
import { getAddress } from 'ethers';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { PERMIT2_ADDRESS, EXACT_PERMIT2 } from '@facilitator/payment-mechanisms';
import { approvePermit2 } from './support/permit2-request';
import { balances, difference, transfersOnChain } from './support/chain-actions';
import { LocalServers } from './support/local-servers';
import { startTestStack, type TestStack } from './support/test-stack';

const FEE = 10_000n;
const PRICE = 50_000n;
const CONTENT = { forecast: 'sunny', temperature: 21 };

let stack: TestStack;
const servers = new LocalServers();
let merchantUrl: string;


beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
  const facilitatorUrl = `${await servers.listen(stack.api.app)}/x402`;

  // the payer lets Permit2 move its USDC, once (what an EIP-2612 permit would do in the same transaction)
  await approvePermit2(stack.devnet, stack.devnet.accounts.payer.privateKey);

  const token = getAddress(stack.devnet.token) as `0x${string}`;
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
            price: { amount: PRICE.toString(), asset: token, extra: { assetTransferMethod: 'permit2', name: 'USDC', version: '2' } },
          },
          description: 'the forecast, paid through Permit2',
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

describe('exact through Permit2: @x402/express + @x402/fetch with our facilitator', () => {
  it('the paid request gets 200 and its content; one fee and one payment on chain', async () => {
    const buyer = new x402Client()
      .register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(stack.devnet.accounts.payer.privateKey as `0x${string}`)))
      .setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: getAddress(stack.devnet.token), maxAmountPerPayment: '1000000' }] });
    const fetchWithPayment = wrapFetchWithPayment(fetch, buyer);
    const fromBlock = await stack.devnet.provider.getBlockNumber();
    const before = await balances(stack.devnet);

    const res = await fetchWithPayment(`${merchantUrl}/forecast`);
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: CONTENT });
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE, merchant: PRICE - FEE, treasury: FEE });
    const { devnet } = stack;
    expect(await transfersOnChain(devnet, fromBlock + 1, devnet.accounts.merchant.address, devnet.accounts.treasury.address)).toBe(1);
    expect(await transfersOnChain(devnet, fromBlock + 1, devnet.accounts.payer.address, devnet.accounts.merchant.address)).toBe(1);

    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, network: 'eip155:84532', transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), payer: getAddress(devnet.accounts.payer.address) });
    const settlement = await stack.db.prisma.settlement.findFirstOrThrow({ where: { settlementTxHash: receipt.transaction } });
    expect(settlement).toMatchObject({ surface: 'x402', state: 'settled', mechanism: EXACT_PERMIT2, nonceSpace: PERMIT2_ADDRESS, amount: PRICE.toString(), feeAmount: FEE.toString() });
    // the payment went through x402's exact proxy, from one of our relayers
    const tx = await devnet.provider.getTransaction(receipt.transaction);
    expect(tx!.to!.toLowerCase()).toBe('0x402085c248eea27d92e8b30b2c58ed07f9e20001');

    // anyone finds it by the payer and its Permit2 nonce (bytes32), as by an EIP-3009 one
    const lookup = await stack.http.get('/v1/settlements/lookup').query({ network: 'eip155:84532', payer: devnet.accounts.payer.address, nonce: settlement.nonce });
    expect(lookup.status).toBe(200);
    expect(lookup.body.settlements).toEqual([expect.objectContaining({ status: 'settled', transaction_hash: receipt.transaction, details: expect.objectContaining({ nonce: settlement.nonce }) })]);
  });
});
