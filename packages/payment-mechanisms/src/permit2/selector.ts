import { bytesToHex, keccak256 } from '@facilitator/core';

const utf8 = new TextEncoder();

/** A function's selector (0x + 4 bytes) from its canonical signature. */
export function selectorOf(signature: string): string {
  return bytesToHex(keccak256(utf8.encode(signature)).subarray(0, 4));
}

/** An event's topic 0 from its canonical signature. */
export function topicOf(signature: string): string {
  return bytesToHex(keccak256(utf8.encode(signature)));
}
