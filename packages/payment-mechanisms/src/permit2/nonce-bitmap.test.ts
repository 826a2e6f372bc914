import { Interface } from 'ethers';
import { FakeContractReads, NONCE, PAYER } from '../testing/permit2-chain';
import { PERMIT2_ADDRESS } from './addresses';
import { isPermit2NonceUsed } from './nonce-bitmap';

const permit2 = new Interface(['function nonceBitmap(address owner, uint256 wordPos) view returns (uint256)']);
const nonce = (value: bigint) => ({ space: PERMIT2_ADDRESS, payer: PAYER, value: '0x' + value.toString(16).padStart(64, '0') });

describe("Permit2's nonce bitmap", () => {
  it("reads the nonce's word of the payer's bitmap from Permit2, encoded as ethers encodes it", async () => {
    const asked: Array<{ to: string; data: string }> = [];
    const chain = { readContract: async (to: string, data: string) => (asked.push({ to, data }), '0x' + '0'.repeat(64)) };
    await isPermit2NonceUsed(nonce(NONCE), chain);
    expect(asked).toEqual([{ to: PERMIT2_ADDRESS, data: permit2.encodeFunctionData('nonceBitmap', [PAYER, 5n]) }]);
  });

  it("is used exactly when the nonce's own bit is set", async () => {
    const chain = new FakeContractReads();
    expect(await isPermit2NonceUsed(nonce(NONCE), chain)).toBe(false);
    // the neighbours in its word, and the same bit of the next word, are other nonces
    chain.spend(PAYER, NONCE - 1n);
    chain.spend(PAYER, NONCE + 1n);
    chain.spend(PAYER, NONCE + 256n);
    chain.spend('0x' + '99'.repeat(20), NONCE);
    expect(await isPermit2NonceUsed(nonce(NONCE), chain)).toBe(false);
    chain.spend(PAYER, NONCE);
    expect(await isPermit2NonceUsed(nonce(NONCE), chain)).toBe(true);
    // the highest nonce: word 2^248 - 1, bit 255
    const top = 2n ** 256n - 1n;
    expect(await isPermit2NonceUsed(nonce(top), chain)).toBe(false);
    chain.spend(PAYER, top);
    expect(await isPermit2NonceUsed(nonce(top), chain)).toBe(true);
  });
});
