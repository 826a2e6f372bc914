// A buyer paying a merchant with the stock @x402/fetch client and default spend controls (USDC only, at
// most $1 a payment). Run with `npm run dev` and examples/merchant.mjs up: node examples/buyer.mjs
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';

// defaults: the dev stack's payer (`npm run dev` prints its key) and the example merchant
const account = privateKeyToAccount(process.env.PAYER_PRIVATE_KEY ?? '0xe10907724a37708dcf3af909859f0949e05d13e64af5c158a98c334b29883d80');
const url = process.env.MERCHANT_URL ?? 'http://127.0.0.1:4021/weather';

const client = new x402Client().register('eip155:*', new ExactEvmScheme(account));
const fetchWithPayment = wrapFetchWithPayment(fetch, client);

const response = await fetchWithPayment(url);
console.log(response.status, await response.json());
const receipt = response.headers.get('PAYMENT-RESPONSE');
if (receipt) console.log('paid:', decodePaymentResponseHeader(receipt));
