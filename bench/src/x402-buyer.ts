// A buyer and a merchant of the x402 ecosystem, for the benchmarks that time paid HTTP requests
// (bench:paid, bench:custody): a merchant's Express app selling one resource through @x402/express's
// `paymentMiddleware` with a given facilitator, and @x402/fetch's `wrapFetchWithPayment` paying for it with
// the devnet payer's key. Each request is timed from the client's call to the resource's body.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { getAddress, Wallet } from 'ethers';
import { decodePaymentResponseHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { UptoEvmScheme as UptoEvmClientScheme } from '@x402/evm/upto/client';
import { UptoEvmScheme as UptoEvmServerScheme } from '@x402/evm/upto/server';
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from '@x402/express';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import type { Devnet } from '@facilitator/evm-devnet';
import { MerchantAction, signMerchantRequest } from '@facilitator/merchants';
import { epochMs } from './stats';

export const PAID_PRICE_UNITS = 50_000n; // $0.05: the merchant nets $0.04 after our $0.01 fee
/** `upto`: the merchant settles this part of the signed maximum (PAID_PRICE_UNITS), above our fee */
export const UPTO_SETTLED_PERCENT = 60n;
export const uptoSettledUnits = (maximum: bigint = PAID_PRICE_UNITS) => (maximum * UPTO_SETTLED_PERCENT) / 100n;

export interface PaidSample {
  startedAt: number;
  endedAt: number;
  ok: boolean;
  nonce?: string;
  transaction?: string;
  error?: string;
}

export function listen(app: express.Express, servers: Server[]): Promise<string> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    servers.push(server);
  });
}

/**
 * A merchant's app selling GET /resource through @x402/express with `facilitatorUrl` as its facilitator;
 * with `permit2`, its requirements ask for `exact` through Permit2 (`extra.assetTransferMethod`), which
 * @x402/evm's client then signs; with `upto`, they ask for `upto` (@x402/evm's upto server scheme, which
 * reads the facilitator's address from its /supported) with PAID_PRICE_UNITS as the maximum, and the
 * handler settles `uptoSettledUnits()` of it through `setSettlementOverrides`, as a metered resource does.
 */
/**
 * The devnet merchant turns settle protection on at one of our facilitators (its API at `apiUrl`) and gets its
 * settle key: only the merchant, by its key, settles less than an upto maximum (docs/decisions.md, "`upto` served").
 */
export async function merchantSettleKey(devnet: Devnet, apiUrl: string): Promise<string> {
  const merchant = devnet.accounts.merchant.address;
  const proof = await signMerchantRequest(new Wallet(devnet.accounts.merchant.privateKey), {
    action: MerchantAction.EnableSettleProtection,
    merchant,
    parameters: {},
    network: { caip2: `eip155:${devnet.chainId}`, chainId: devnet.chainId },
    treasury: devnet.accounts.treasury.address,
  });
  const response = await fetch(`${apiUrl}/v1/merchants/${merchant}/settle-key`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ proof }) });
  const body = (await response.json()) as { settle_key?: string };
  if (!response.ok || !body.settle_key) throw new Error(`settle protection for ${merchant} at ${apiUrl}: ${response.status} ${JSON.stringify(body)}`);
  return body.settle_key;
}

/** `settleKey`: the merchant's, sent with every facilitator call (ours, where it turned settle protection on) */
export function merchantApp(devnet: Devnet, facilitatorUrl: string, options: { permit2?: boolean; upto?: boolean; settleKey?: string } = {}): express.Express {
  const network = `eip155:${devnet.chainId}` as const;
  const { settleKey } = options;
  const auth = settleKey
    ? async () => {
        const headers = { Authorization: `Bearer ${settleKey}` };
        return { verify: headers, settle: headers, supported: headers };
      }
    : undefined;
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl, ...(auth ? { createAuthHeaders: auth } : {}) })).register(
    network,
    options.upto ? new UptoEvmServerScheme() : new ExactEvmServerScheme(),
  );
  const app = express();
  app.use(
    paymentMiddleware(
      {
        'GET /resource': {
          accepts: {
            scheme: options.upto ? 'upto' : 'exact',
            network: `eip155:${devnet.chainId}`,
            payTo: getAddress(devnet.accounts.merchant.address),
            // the devnet's USDC is not the public Base Sepolia address, so the asset is spelled out
            price: {
              amount: PAID_PRICE_UNITS.toString(),
              asset: getAddress(devnet.token),
              extra: { name: devnet.eip712Domain.name, version: devnet.eip712Domain.version, ...(options.permit2 ? { assetTransferMethod: 'permit2' } : {}) },
            },
          },
          description: 'a paid resource',
        },
      },
      resourceServer,
    ),
  );
  app.get('/resource', (_req, res) => {
    if (options.upto) setSettlementOverrides(res, { amount: uptoSettledUnits().toString() });
    res.json({ forecast: 'sunny', temperature: 21 });
  });
  return app;
}

/** The devnet payer, paying `exact` (EIP-3009 or Permit2, as the requirements ask) and `upto` (Permit2). */
export function buyerOf(devnet: Devnet): x402Client {
  const account = privateKeyToAccount(devnet.accounts.payer.privateKey as `0x${string}`);
  return new x402Client()
    .register('eip155:*', new ExactEvmClientScheme(account))
    .register('eip155:*', new UptoEvmClientScheme(account))
    .setSpendControls({ allowedAssets: [{ network: `eip155:${devnet.chainId}`, asset: getAddress(devnet.token), maxAmountPerPayment: '1000000' }] });
}

/** One paid request, the way a buyer's program makes it; the payment's nonce is caught on its way out. */
export async function paidRequest(url: string, buyer: x402Client): Promise<PaidSample> {
  let signatureHeader: string | undefined;
  const watching: typeof fetch = (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    signatureHeader = request.headers.get('PAYMENT-SIGNATURE') ?? signatureHeader;
    return fetch(request);
  };
  const pay = wrapFetchWithPayment(watching, buyer);
  const startedAt = epochMs();
  const sample: PaidSample = { startedAt, endedAt: startedAt, ok: false };
  try {
    const response = await pay(url);
    const body = (await response.json()) as { forecast?: string };
    sample.endedAt = epochMs();
    sample.ok = response.status === 200 && body.forecast === 'sunny';
    const receipt = response.headers.get('PAYMENT-RESPONSE');
    if (receipt) sample.transaction = decodePaymentResponseHeader(receipt).transaction;
    if (!sample.ok) sample.error = `${response.status}: ${JSON.stringify(body).slice(0, 300)}${receipt ? ` ${JSON.stringify(decodePaymentResponseHeader(receipt))}` : ''}`;
  } catch (err) {
    sample.endedAt = epochMs();
    sample.error = err instanceof Error ? err.message : String(err);
  }
  if (signatureHeader) {
    const payload = decodePaymentSignatureHeader(signatureHeader).payload as { authorization?: { nonce?: string }; permit2Authorization?: { nonce?: string } };
    // a Permit2 nonce is a decimal uint256; our rows keep every nonce as bytes32
    const permit2Nonce = payload.permit2Authorization?.nonce;
    sample.nonce = permit2Nonce !== undefined ? '0x' + BigInt(permit2Nonce).toString(16).padStart(64, '0') : payload.authorization?.nonce?.toLowerCase();
  }
  return sample;
}

