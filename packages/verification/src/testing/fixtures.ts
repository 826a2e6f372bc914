// Shared by the verification unit tests (no services): one network on Base Sepolia with a known token and
// EIP-712 domain, and fixed keys. Not exported from the package index.
import { Wallet } from 'ethers';
import { permit2WitnessTypes } from '@x402/evm';
import type { NetworkConfig } from '@facilitator/config';
import { domainSeparator, type Eip712Domain } from '@facilitator/core';
import { exactPermit2, X402_EXACT_PERMIT2_PROXY } from '@facilitator/payment-mechanisms';
import { signPermit2 } from '@facilitator/payment-mechanisms/testing';
import type { Payment } from '../payment';

export const TOKEN = '0x036cbd53842c5426634e7929541ec2318f3dcf7e';
export const DOMAIN: Eip712Domain = { name: 'USDC', version: '2', chainId: 84532, verifyingContract: TOKEN };
export const SEPARATOR = domainSeparator(DOMAIN);
export const NETWORK: NetworkConfig = {
  chainId: 84532,
  caip2: 'eip155:84532',
  legacyName: 'base-sepolia',
  rpcUrl: 'http://rpc.invalid',
  rpcUrls: ['http://rpc.invalid'],
  rpcTimeoutMs: 1000,
  walletFactories: [],
  walletImplementations: [],
  tokenAddress: TOKEN,
  confirmations: 1,
  gasCaps: { fee: 1n, transfer: 1n, contractTransfer: 1n, walletDeploy: 1n },
  maxFeePerGas: 1n,
  replaceAfterMs: 1000,
  relayerMinBalance: 0n,
  finalityDepth: 1,
  batchGasBudget: 6_000_000n,
};

export const payer = new Wallet('0x' + '11'.repeat(32));
export const stranger = new Wallet('0x' + '22'.repeat(32));
export const MERCHANT = '0x' + 'aa'.repeat(20);
export const TREASURY = '0x' + 'bb'.repeat(20);

/** An x402 v2 payment of 1 USDC to MERCHANT through Permit2, signed by `payer`, as the normalizers build it. */
export async function signedPermit2Payment(fields: { to?: string; token?: string; spender?: string; nonce?: bigint; validAfter: bigint; deadline: bigint }): Promise<Payment> {
  const message = {
    permitted: { token: fields.token ?? TOKEN, amount: '1000000' },
    spender: fields.spender ?? X402_EXACT_PERMIT2_PROXY,
    nonce: String(fields.nonce ?? 77n),
    deadline: String(fields.deadline),
    witness: { to: fields.to ?? MERCHANT, validAfter: String(fields.validAfter) },
  };
  // Permit2's witness transfer for x402's exact proxy, as @x402/evm's client signs it (its own types)
  const signature = await signPermit2(payer, NETWORK.chainId, permit2WitnessTypes, message);
  const body = { permit2Authorization: { from: payer.address, ...message }, signature };
  return {
    protocolVersion: 2,
    mechanism: exactPermit2,
    surface: 'x402',
    network: NETWORK,
    networkName: 'eip155:84532',
    ...exactPermit2.parse(body, '/paymentPayload/payload', NETWORK),
    expected: { payTo: MERCHANT, amount: 1_000_000n, token: TOKEN },
    request: {},
  };
}
