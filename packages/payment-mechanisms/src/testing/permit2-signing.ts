// Signing and reading Permit2 payloads as x402 clients make them, for the tests of the Permit2 mechanisms.
import { InvalidRequestError } from '@facilitator/core';
import { Signature, type BaseWallet } from 'ethers';
import { PERMIT2_ADDRESS } from '../permit2/addresses';

type TypedFields = Readonly<Record<string, ReadonlyArray<{ readonly name: string; readonly type: string }>>>;

/** Permit2's EIP-712 domain on a chain, as every x402 client signs under it. */
export const permit2Domain = (chainId: number) => ({ name: 'Permit2', chainId, verifyingContract: PERMIT2_ADDRESS });

/** `@x402/evm`'s readonly witness types as ethers takes them (mutable copies). */
export function ethersTypes(types: TypedFields): Record<string, Array<{ name: string; type: string }>> {
  return Object.fromEntries(Object.entries(types).map(([name, fields]) => [name, fields.map((f) => ({ ...f }))]));
}

/** The payer's signature of a PermitWitnessTransferFrom message under Permit2's domain, with `@x402/evm`'s types. */
export function signPermit2(payer: BaseWallet, chainId: number, types: TypedFields, message: Record<string, unknown>): Promise<string> {
  return payer.signTypedData(permit2Domain(chainId), ethersTypes(types), message);
}

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The other forms Permit2 takes of a 65-byte signature: EIP-2098's 64 bytes, and its high-s twin (ecrecover has no rule on s). */
export function otherPermit2Forms(signature: string): { compact: string; highS: string } {
  const sig = Signature.from(signature);
  const highS = sig.r + (SECP256K1_N - BigInt(sig.s)).toString(16).padStart(64, '0') + (sig.v === 27 ? '1c' : '1b');
  return { compact: sig.compactSerialized, highS };
}

/** The path `read` refuses its input at (the first problem of its InvalidRequestError); undefined when it does not. */
export function refusedPath(read: () => unknown): string | undefined {
  try {
    read();
  } catch (err) {
    if (err instanceof InvalidRequestError) return (err.details?.errors as Array<{ path: string }> | undefined)?.[0]?.path;
    throw err;
  }
  return undefined;
}
