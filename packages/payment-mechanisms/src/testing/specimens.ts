// One signed payment of each registered mechanism, as x402 clients make it, and what the chain shows when its
// direct call runs: what the conformance suite (src/conformance.test.ts) runs every mechanism's checklist on,
// and what a mechanism's own tests sign with instead of a copy of their own.
import { addressWord, TRANSFER_TOPIC, uintWord } from '@facilitator/evm-chain';
import { domainSeparator } from '@facilitator/core';
import { Wallet } from 'ethers';
import { permit2WitnessTypes, uptoPermit2WitnessTypes } from '@x402/evm';
import type { MechanismChain } from '../chain-port';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../exact-eip3009/eip712';
import type { LogLike, MechanismNetwork, PaymentMechanism } from '../mechanism';
import { X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import { topicOf } from '../permit2/selector';
import { exactEip3009 } from '../exact-eip3009';
import { exactPermit2 } from '../exact-permit2';
import { uptoPermit2 } from '../upto-permit2';
import { signPermit2 } from './permit2-signing';
import { EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2, type PaymentMechanismId } from '../mechanism-ids';

export const SPECIMEN_NETWORK: MechanismNetwork = { chainId: 84532, tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' };
/** the token's own EIP-712 domain (USDC on Base Sepolia), for a mechanism whose checking contract is the token */
export const SPECIMEN_TOKEN_DOMAIN = { name: 'USDC', version: '2', chainId: SPECIMEN_NETWORK.chainId, verifyingContract: SPECIMEN_NETWORK.tokenAddress };
const PAYEE = '0x' + 'ab'.repeat(20);

/** A signed payload as a client sends it, and who signed it. */
export interface SignedSpecimen {
  payer: string;
  payload: unknown;
}

/** What the conformance suite needs of one mechanism beyond the mechanism itself. */
export interface MechanismSpecimen {
  mechanism: PaymentMechanism<unknown>;
  /** a fresh payment, signed by a fresh key, moving `amount` (exact) or at most it (maximum) */
  sign(amount?: bigint): Promise<SignedSpecimen>;
  /** the separator its signatures are made under when its checking contract is the token (no `signature.ownDomainSeparator`) */
  tokenDomainSeparator?: Uint8Array;
  /** the logs of a transaction that ran its direct call moving `amount` from `payer` to `payee` */
  executionLogs(payer: string, payee: string, amount: bigint): LogLike[];
  /** enough of a chain for its direct call to be built */
  chain: MechanismChain;
  /** a payload it claims with one field wrong, and that field's path under `/payload` */
  malformed(payload: unknown): { payload: unknown; path: string };
}

/** the token's Transfer(from, to, amount) log */
export function transferLog(token: string, from: string, to: string, amount: bigint): LogLike {
  return { address: token, topics: [TRANSFER_TOPIC, '0x' + addressWord(from), '0x' + addressWord(to)], data: '0x' + uintWord(amount) };
}

/** A chain that builds calls and reads nothing (the conformance suite runs offline). */
export const OFFLINE_CHAIN: MechanismChain = {
  tokenAddress: SPECIMEN_NETWORK.tokenAddress,
  isAuthorizationUsed: async () => false,
  findAuthorizationUse: async () => undefined,
  readContract: async () => '0x',
  recentLogs: async () => [],
  minedTransaction: async () => undefined,
};

/** A random 256-bit nonce, as clients make it: bytes32 hex (EIP-3009) or decimal (Permit2). */
const randomNonce = () => BigInt(Wallet.createRandom().privateKey);

export async function signedExactEip3009(amount = 10_000n): Promise<SignedSpecimen> {
  const payer = Wallet.createRandom();
  const authorization = { from: payer.address, to: PAYEE, value: amount.toString(), validAfter: '0', validBefore: '1900000000', nonce: '0x' + randomNonce().toString(16).padStart(64, '0') };
  const signature = await payer.signTypedData(SPECIMEN_TOKEN_DOMAIN, TRANSFER_WITH_AUTHORIZATION_TYPES, authorization);
  return { payer: payer.address.toLowerCase(), payload: { authorization, signature } };
}

export async function signedExactPermit2(amount = 10_000n): Promise<SignedSpecimen> {
  const payer = Wallet.createRandom();
  const message = {
    permitted: { token: SPECIMEN_NETWORK.tokenAddress, amount: amount.toString() },
    spender: X402_EXACT_PERMIT2_PROXY,
    nonce: randomNonce().toString(),
    deadline: '1900000000',
    witness: { to: PAYEE, validAfter: '1740672089' },
  };
  const signature = await signPermit2(payer, SPECIMEN_NETWORK.chainId, permit2WitnessTypes, message);
  return { payer: payer.address.toLowerCase(), payload: { permit2Authorization: { from: payer.address, ...message }, signature } };
}

export async function signedUptoPermit2(amount = 10_000n, facilitator = '0x' + 'fa'.repeat(20)): Promise<SignedSpecimen> {
  const payer = Wallet.createRandom();
  const message = {
    permitted: { token: SPECIMEN_NETWORK.tokenAddress, amount: amount.toString() },
    spender: X402_UPTO_PERMIT2_PROXY,
    nonce: randomNonce().toString(),
    deadline: '1900000000',
    witness: { to: PAYEE, facilitator, validAfter: '1740672089' },
  };
  const signature = await signPermit2(payer, SPECIMEN_NETWORK.chainId, uptoPermit2WitnessTypes, message);
  return { payer: payer.address.toLowerCase(), payload: { permit2Authorization: { from: payer.address, ...message }, signature } };
}

/** x402's proxies emit an argument-less Settled() right after the transfer they made */
const throughProxy = (proxy: string) => (payer: string, payee: string, amount: bigint) => [
  transferLog(SPECIMEN_NETWORK.tokenAddress, payer, payee, amount),
  { address: proxy, topics: [topicOf('Settled()')], data: '0x' },
];

/** Every registered mechanism's specimen, by id: a mechanism registered without one fails the conformance suite. */
export const SPECIMENS: { readonly [Id in PaymentMechanismId]: MechanismSpecimen } = {
  [EXACT_EIP3009]: {
    mechanism: exactEip3009 as PaymentMechanism<unknown>,
    sign: signedExactEip3009,
    tokenDomainSeparator: domainSeparator(SPECIMEN_TOKEN_DOMAIN),
    executionLogs: (payer, payee, amount) => [transferLog(SPECIMEN_NETWORK.tokenAddress, payer, payee, amount)],
    chain: OFFLINE_CHAIN,
    malformed: (payload) => withField(payload, ['authorization', 'validBefore'], '1e9'),
  },
  [EXACT_PERMIT2]: {
    mechanism: exactPermit2 as PaymentMechanism<unknown>,
    sign: signedExactPermit2,
    executionLogs: throughProxy(X402_EXACT_PERMIT2_PROXY),
    chain: OFFLINE_CHAIN,
    malformed: (payload) => withField(payload, ['permit2Authorization', 'nonce'], '-1'),
  },
  [UPTO_PERMIT2]: {
    mechanism: uptoPermit2 as PaymentMechanism<unknown>,
    sign: signedUptoPermit2,
    executionLogs: throughProxy(X402_UPTO_PERMIT2_PROXY),
    chain: OFFLINE_CHAIN,
    malformed: (payload) => withField(payload, ['permit2Authorization', 'witness', 'facilitator'], '0x12'),
  },
};

/** `payload` with the field at `keys` set to `value` (a deep copy), and the field's path under `/payload`. */
export function withField(payload: unknown, keys: readonly string[], value: unknown): { payload: unknown; path: string } {
  const copy = JSON.parse(JSON.stringify(payload)) as Record<string, unknown>;
  let at = copy;
  for (const key of keys.slice(0, -1)) at = at[key] as Record<string, unknown>;
  at[keys[keys.length - 1]] = value;
  return { payload: copy, path: `/payload/${keys.join('/')}` };
}
