// A buyer paying a Permit2 merchant (examples/merchant-permit2.mjs) with the stock @x402/fetch client. The
// same `exact` client as buyer.mjs, given an RPC URL: it reads its Permit2 allowance and, when short, signs
// an EIP-2612 permit beside the payment. Run: node examples/buyer-permit2.mjs
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';

const account = privateKeyToAccount(process.env.PAYER_PRIVATE_KEY ?? '0xe10907724a37708dcf3af909859f0949e05d13e64af5c158a98c334b29883d80');
const url = process.env.MERCHANT_URL ?? 'http://127.0.0.1:4021/weather';
// the dev stack's chain; on Base Sepolia itself, https://sepolia.base.org
const rpcUrl = process.env.RPC_URL ?? 'http://127.0.0.1:8545';

const client = new x402Client().register('eip155:*', new ExactEvmScheme(account, { rpcUrl }));
const fetchWithPayment = wrapFetchWithPayment(fetch, client);

const response = await fetchWithPayment(url);
console.log(response.status, await response.json());
const receipt = response.headers.get('PAYMENT-RESPONSE');
if (receipt) console.log('paid:', decodePaymentResponseHeader(receipt));
