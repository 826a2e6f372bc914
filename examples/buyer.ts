// A buyer paying any of the merchants above: stock @x402/fetch with @x402/evm's `exact` (EIP-3009 or Permit2,
// as the merchant asks) and `upto` schemes and default spend controls. `rpcUrl` lets the client read its
// Permit2 allowance and sign an EIP-2612 permit when a merchant offers eip2612GasSponsoring.
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';

const account = privateKeyToAccount(process.env.BUYER_PRIVATE_KEY as `0x${string}`);
const rpcUrl = process.env.RPC_URL ?? 'http://127.0.0.1:8545';
const client = new x402Client().register('eip155:*', new ExactEvmScheme(account, { rpcUrl })).register('eip155:*', new UptoEvmScheme(account));
const fetchWithPayment = wrapFetchWithPayment(fetch, client);

async function main(): Promise<void> {
  const response = await fetchWithPayment(process.env.RESOURCE_URL ?? 'http://127.0.0.1:4021/weather');
  console.log(response.status, await response.json());
  const receipt = response.headers.get('PAYMENT-RESPONSE');
  if (receipt) console.log(decodePaymentResponseHeader(receipt)); // { success, transaction, network, payer, ... }
}
void main();
