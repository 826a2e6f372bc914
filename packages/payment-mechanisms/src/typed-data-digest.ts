import { keccak256 } from '@facilitator/core';

/** EIP-712's digest of a struct: keccak256(0x1901 ‖ domainSeparator ‖ hashStruct), whatever the mechanism. */
export function typedDataDigest(separator: Uint8Array, structHash: Uint8Array): Uint8Array {
  const message = new Uint8Array(66);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(separator, 2);
  message.set(structHash, 34);
  return keccak256(message);
}
