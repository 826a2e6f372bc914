import { randomBytes } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3';
import { keccak256 as ethersKeccak256 } from 'ethers';
import { KECCAK_BACKEND, keccak256 } from './keccak';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

it('runs the native binding on this machine (a silent fall-back to JavaScript would cost every verification)', () => {
  expect(KECCAK_BACKEND).toBe('native');
});

it('agrees with @noble/hashes and ethers for every length around the 136-byte block, and for empty input', () => {
  for (let length = 0; length <= 300; length++) {
    const bytes = randomBytes(length);
    const ours = hex(keccak256(bytes));
    expect({ length, ours }).toEqual({ length, ours: hex(keccak_256(bytes)) });
    expect(`0x${ours}`).toBe(ethersKeccak256(bytes));
  }
  // the well-known hash of nothing
  expect(hex(keccak256(new Uint8Array(0)))).toBe('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
});

it('hashes a view into a larger buffer by its own bytes only, and each call starts afresh', () => {
  const whole = randomBytes(100);
  const view = new Uint8Array(whole.buffer, whole.byteOffset + 10, 40);
  expect(hex(keccak256(view))).toBe(hex(keccak_256(Uint8Array.from(view))));
  const first = hex(keccak256(whole));
  keccak256(randomBytes(500));
  expect(hex(keccak256(whole))).toBe(first);
});
