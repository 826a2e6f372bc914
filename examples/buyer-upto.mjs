// A buyer paying an `upto` merchant (examples/merchant-upto.mjs) with the stock @x402/fetch client: it signs
// a Permit2 transfer of at most the merchant's maximum and is charged what the merchant settles. Given an RPC
// URL, it signs an EIP-2612 permit for Permit2 when its allowance is short. Run: node examples/buyer-upto.mjs
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';

const account = privateKeyToAccount(process.env.PAYER_PRIVATE_KEY ?? '0xe10907724a37708dcf3af909859f0949e05d13e64af5c158a98c334b29883d80');
const url = process.env.MERCHANT_URL ?? 'http://127.0.0.1:4021/generate';
const rpcUrl = process.env.RPC_URL ?? 'http://127.0.0.1:8545';

const client = new x402Client().register('eip155:*', new UptoEvmScheme(account, { rpcUrl }));
const fetchWithPayment = wrapFetchWithPayment(fetch, client);

const response = await fetchWithPayment(url);
console.log(response.status, await response.json());
const receipt = response.headers.get('PAYMENT-RESPONSE');
if (receipt) console.log('paid:', decodePaymentResponseHeader(receipt));
