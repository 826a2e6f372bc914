import { decodeBase58, encodeBase58, toBeArray } from 'ethers';

/** Bytes in base58 (Bitcoin's alphabet, as Solana writes keys and signatures), leading zero bytes as `1`s. */
export function base58(bytes: Uint8Array): string {
  return encodeBase58(bytes);
}

/** The `length` bytes a base58 text spells; throws for a text that is not base58 or not that long. */
export function fromBase58(text: string, length: number): Uint8Array {
  const leadingZeros = /^1*/.exec(text)![0].length;
  const value = decodeBase58(text);
  const body = value === 0n ? new Uint8Array(0) : toBeArray(value);
  const bytes = new Uint8Array(leadingZeros + body.length);
  bytes.set(body, leadingZeros);
  if (bytes.length !== length) throw new Error(`base58 text of ${bytes.length} bytes, not ${length}`);
  return bytes;
}
