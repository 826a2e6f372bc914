// Shared by the verification unit tests (no services): one network on Base Sepolia with a known token and
// EIP-712 domain, and fixed keys. Not exported from the package index.
import { Wallet } from 'ethers';
import type { NetworkConfig } from '@facilitator/config';
import { domainSeparator, type Eip712Domain } from '@facilitator/core';

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
