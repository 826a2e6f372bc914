import { InvalidRequestError, keccak256, writeBytes, writeUint } from '@facilitator/core';
import { addressWord, decodeUint, encodeCall } from '@facilitator/evm-chain';
import { recoverAuthorizationSigner } from '../exact-eip3009/eip712';
import type { ContractReads } from '../chain-port';
import type { ApprovalPermit, StoredPayload } from '../mechanism';
import { typedDataDigest } from '../typed-data-digest';
import { selectorOf } from './selector';

/**
 * x402's `eip2612GasSponsoring` extension (`@x402/extensions`, `@x402/evm` 2.27): a Permit2 payment may carry
 * the payer's EIP-2612 permit letting Permit2 move the token, which the facilitator submits in the payment's
 * own transaction (x402's proxies' `settleWithPermit`), so a payer who never approved Permit2 can pay.
 * It travels in `paymentPayload.extensions.eip2612GasSponsoring.info`, beside the signed payload.
 */
export const EIP2612_GAS_SPONSORING = 'eip2612GasSponsoring';

/**
 * The gas a transaction that sends the permit with the payment may spend on it beyond the payment's own
 * cap: the token's permit (the signature's recovery, the owner's nonce and the allowance written, both
 * possibly from zero) inside the proxy's settleWithPermit. An estimate, not a measurement: the e2e test's
 * settleWithPermit with Circle's USDC from an allowance and a nonce of 0 fits the transfer cap plus this.
 */
export const EIP2612_PERMIT_GAS = 80_000n;

const utf8 = new TextEncoder();
const PERMIT_TYPEHASH = keccak256(utf8.encode('Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)'));
const NONCES = selectorOf('nonces(address)');

const PERMIT_FIELDS = ['from', 'asset', 'spender', 'amount', 'nonce', 'deadline', 'signature'] as const;

function invalid(path: string, message: string): InvalidRequestError {
  return new InvalidRequestError('invalid request', { errors: [{ path, message }] });
}

/**
 * The permit a payment's x402 extensions carry, normalized; undefined when they carry none (the server's
 * declaration echoed back, `{ description, version }`, is no permit). The schema has checked the fields'
 * shapes; a field that is still not what it must be is named by its path.
 */
export function eip2612PermitOf(extensions: unknown, path: string): ApprovalPermit | undefined {
  const extension = (extensions as Record<string, unknown> | null | undefined)?.[EIP2612_GAS_SPONSORING] as { info?: Record<string, unknown> } | undefined;
  const info = extension?.info;
  if (typeof info !== 'object' || info === null || !PERMIT_FIELDS.some((field) => field in info)) return undefined;
  const at = `${path}/${EIP2612_GAS_SPONSORING}/info`;
  const text = (field: string, pattern: RegExp, what: string): string => {
    const value = info[field];
    if (typeof value !== 'string' || !pattern.test(value)) throw invalid(`${at}/${field}`, `must be ${what}`);
    return value.toLowerCase();
  };
  const address = (field: string) => text(field, /^0x[0-9a-fA-F]{40}$/, 'a 0x-prefixed 20-byte hex address');
  const uint = (field: string) => {
    const value = BigInt(text(field, /^[0-9]{1,78}$/, 'a decimal string'));
    if (value >= 1n << 256n) throw invalid(`${at}/${field}`, 'must fit in uint256');
    return value;
  };
  return {
    owner: address('from'),
    token: address('asset'),
    spender: address('spender'),
    value: uint('amount'),
    nonce: uint('nonce'),
    deadline: uint('deadline'),
    // x402's proxies take the permit as v, r, s: 65 bytes
    signature: text('signature', /^0x[0-9a-fA-F]{130}$/, 'a 65-byte 0x hex signature (r, s, v)'),
  };
}

/** The permit as a payment's extensions carry it, in the extension's own field names: `eip2612PermitOf` reads it back. */
export function storedEip2612Permit(p: ApprovalPermit): StoredPayload {
  return {
    [EIP2612_GAS_SPONSORING]: {
      info: {
        from: p.owner,
        asset: p.token,
        spender: p.spender,
        amount: p.value.toString(),
        nonce: p.nonce.toString(),
        deadline: p.deadline.toString(),
        signature: p.signature,
        version: '1',
      },
    },
  };
}

/** The digest the owner signed: EIP-2612's `Permit` under the token's EIP-712 domain. */
export function eip2612PermitDigest(tokenDomainSeparator: Uint8Array, p: ApprovalPermit): Uint8Array {
  const words = new Uint8Array(6 * 32);
  words.set(PERMIT_TYPEHASH, 0);
  writeBytes(words, 1, p.owner, 20);
  writeBytes(words, 2, p.spender, 20);
  writeUint(words, 3, p.value);
  writeUint(words, 4, p.nonce);
  writeUint(words, 5, p.deadline);
  return typedDataDigest(tokenDomainSeparator, keccak256(words));
}

/**
 * The owner of an EIP-2612 permit as the token recovers it from an account without code: USDC's rules (65
 * bytes, low s, v 27 or 28), as for its EIP-3009 authorizations; undefined when nothing recovers.
 */
export function eip2612PermitSigner(tokenDomainSeparator: Uint8Array, p: ApprovalPermit): { ok: true; address: string } | { ok: false; reason: string } {
  return recoverAuthorizationSigner(eip2612PermitDigest(tokenDomainSeparator, p), p.signature);
}

/** The token's next EIP-2612 nonce of `owner`: a permit with any other is refused by the token. */
export async function eip2612Nonce(token: string, owner: string, chain: Pick<ContractReads, 'readContract'>): Promise<bigint> {
  return decodeUint(await chain.readContract(token, encodeCall(NONCES, [addressWord(owner)])));
}

/** The permit's signature as x402's proxies' `EIP2612Permit` takes it: v, r, s. */
export function splitEip2612Signature(signature: string): { r: string; s: string; v: number } {
  const hex = signature.slice(2);
  return { r: '0x' + hex.slice(0, 64), s: '0x' + hex.slice(64, 128), v: parseInt(hex.slice(128, 130), 16) };
}
