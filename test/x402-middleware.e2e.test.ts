// A merchant's Express app protected by the real x402 middleware, with our service as its facilitator
// (facilitator URL http://<host>/x402), paid by the real x402 fetch clients: once with the v2 packages
// (@x402/express, @x402/fetch, @x402/evm) and once with the v1 packages (x402-express, x402-fetch).
// Everything runs against anvil with Circle's USDC and the compiled worker.
import express from 'express';
import { getAddress } from 'ethers';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { paymentMiddleware as paymentMiddlewareV1 } from 'x402-express';
import { createSigner, decodeXPaymentResponse, wrapFetchWithPayment as wrapFetchWithPaymentV1 } from 'x402-fetch';
import { balances, difference } from './support/chain-actions';
import { LocalServers } from './support/local-servers';
import { startTestStack, type TestStack } from './support/test-stack';

const FEE = 10_000n;
const PRICE = 50_000n;
const CONTENT = { forecast: 'sunny', temperature: 21 };

let stack: TestStack;
const servers = new LocalServers();
let facilitatorUrl: string;
let merchantUrl: string;


beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
  facilitatorUrl = `${await servers.listen(stack.api.app)}/x402`;

  const token = getAddress(stack.devnet.token) as `0x${string}`;
  const payTo = getAddress(stack.devnet.accounts.merchant.address);
  const merchant = express();

  // v2: the resource server asks our /supported at start, then /verify before and /settle after the handler
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(
    'eip155:84532',
    new ExactEvmServerScheme(),
  );
  merchant.use(
    paymentMiddleware(
      {
        'GET /v2/forecast': {
          accepts: {
            scheme: 'exact',
            network: 'eip155:84532',
            payTo,
            // the devnet's USDC is not the public Base Sepolia address, so the asset is spelled out
            price: { amount: PRICE.toString(), asset: token, extra: { name: 'USDC', version: '2' } },
          },
          description: 'the forecast, v2',
        },
      },
      resourceServer,
    ),
  );

  // v1: x402-express 1.x, network "base-sepolia" (chain 84532, which is what the devnet runs)
  merchant.use(
    paymentMiddlewareV1(
      payTo as `0x${string}`,
      {
        'GET /v1/forecast': {
          price: { amount: PRICE.toString(), asset: { address: token, decimals: 6, eip712: { name: 'USDC', version: '2' } } },
          network: 'base-sepolia',
          config: { description: 'the forecast, v1' },
        },
      },
      { url: facilitatorUrl as `${string}://${string}` },
    ),
  );

  merchant.get(['/v2/forecast', '/v1/forecast'], (_req, res) => {
    res.json(CONTENT);
  });
  merchantUrl = await servers.listen(merchant);
});

afterAll(async () => {
  await servers.close();
  await stack?.stop();
});

async function expectCharged(pay: () => Promise<Response>) {
  const before = await balances(stack.devnet);
  const res = await pay();
  const body = await res.json();
  expect({ status: res.status, body }).toEqual({ status: 200, body: CONTENT });
  expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE, merchant: PRICE - FEE, treasury: FEE });
  return res;
}

describe('@x402/express + @x402/fetch (x402Version 2) with our facilitator', () => {
  it('an unpaid request gets 402 with requirements naming our token', async () => {
    const res = await fetch(`${merchantUrl}/v2/forecast`);
    expect(res.status).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get('PAYMENT-REQUIRED')!);
    expect(required.accepts).toEqual([
      expect.objectContaining({ scheme: 'exact', network: 'eip155:84532', amount: PRICE.toString(), asset: getAddress(stack.devnet.token) }),
    ]);
  });

  it('the paid request gets 200 and its content; payer -price, merchant +price -fee, treasury +fee', async () => {
    const buyer = new x402Client()
      .register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(stack.devnet.accounts.payer.privateKey as `0x${string}`)))
      .setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: getAddress(stack.devnet.token), maxAmountPerPayment: '1000000' }] });
    const fetchWithPayment = wrapFetchWithPayment(fetch, buyer);

    const res = await expectCharged(() => fetchWithPayment(`${merchantUrl}/v2/forecast`));
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({
      success: true,
      network: 'eip155:84532',
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      payer: getAddress(stack.devnet.accounts.payer.address),
    });
    const settlement = await stack.db.prisma.settlement.findFirstOrThrow({ where: { settlementTxHash: receipt.transaction } });
    expect(settlement).toMatchObject({ surface: 'x402', state: 'settled', amount: PRICE.toString(), feeAmount: FEE.toString() });
    const verification = await stack.db.prisma.verification.findUniqueOrThrow({ where: { id: settlement.verificationId } });
    expect(verification).toMatchObject({ surface: 'x402', protocolVersion: 2, status: 'verified' });
  });
});

describe('x402-express + x402-fetch (x402Version 1) with our facilitator', () => {
  it('an unpaid request gets 402 with x402Version 1 requirements', async () => {
    const res = await fetch(`${merchantUrl}/v1/forecast`);
    expect(res.status).toBe(402);
    const body = await res.json();
    expect(body).toMatchObject({
      x402Version: 1,
      accepts: [expect.objectContaining({ network: 'base-sepolia', maxAmountRequired: PRICE.toString(), asset: getAddress(stack.devnet.token) })],
    });
  });

  it('the paid request gets 200 and its content; payer -price, merchant +price -fee, treasury +fee', async () => {
    // a viem wallet client on Base Sepolia; signing the authorization is local, so no RPC is reached
    const signer = await createSigner('base-sepolia', stack.devnet.accounts.payer.privateKey);
    const fetchWithPayment = wrapFetchWithPaymentV1(fetch, signer, 1_000_000n);

    const res = await expectCharged(() => fetchWithPayment(`${merchantUrl}/v1/forecast`));
    const receipt = decodeXPaymentResponse(res.headers.get('X-PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, network: 'base-sepolia', transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const settlement = await stack.db.prisma.settlement.findFirstOrThrow({ where: { settlementTxHash: receipt.transaction } });
    expect(settlement).toMatchObject({ surface: 'x402', state: 'settled', amount: PRICE.toString() });
    const verification = await stack.db.prisma.verification.findUniqueOrThrow({ where: { id: settlement.verificationId } });
    expect(verification).toMatchObject({ surface: 'x402', protocolVersion: 1, networkName: 'base-sepolia', network: 'eip155:84532', status: 'verified' });
  });
});
