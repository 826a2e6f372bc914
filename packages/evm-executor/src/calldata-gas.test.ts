import { getBytes } from 'ethers';
import { calldataGas, itemCalldataGas } from './calldata-gas';
import { settleCalldata, type ExecutorItem } from './executor-calls';

// an item whose call carries a signature of this many bytes (a contract wallet's may be kilobytes)
function item(signatureBytes: number, fill = 'ab'): ExecutorItem {
  return {
    payer: '0x' + '33'.repeat(20), merchant: '0x' + '44'.repeat(20), amount: 10_000n, nonce: '0x' + '07'.repeat(32),
    target: '0x' + '55'.repeat(20), data: '0xcf092995' + '00'.repeat(7 * 32) + fill.repeat(signatureBytes), gas: 250_000n,
  };
}

function byteGas(data: string): bigint {
  return getBytes(data).reduce((sum, b) => sum + (b === 0 ? 4n : 16n), 0n);
}

describe('calldata gas', () => {
  it('is 16 per non-zero byte and 4 per zero byte', () => {
    expect(calldataGas('0x')).toBe(0n);
    expect(calldataGas('0x00ff0001')).toBe(4n + 16n + 4n + 16n);
    expect(calldataGas('0x' + 'ab'.repeat(4096))).toBe(65_536n);
  });

  it.each([65, 97, 800, 4096])('of an item with a %i-byte signature is what the item adds to settle calldata (at least)', (bytes) => {
    const one = settleCalldata([item(1)]);
    const two = settleCalldata([item(1), item(bytes)]);
    const added = byteGas(two) - byteGas(one);
    const counted = itemCalldataGas(item(bytes));
    // exact but for the offset word, counted at its most
    expect(counted).toBeGreaterThanOrEqual(added);
    expect(counted - added).toBeLessThanOrEqual(12n * 2n);
  });

  it('grows with the signature: a 4 KB contract-wallet signature costs ~65k gas, an ECDSA item ~6k', () => {
    expect(itemCalldataGas(item(65))).toBeLessThan(7_000n);
    expect(itemCalldataGas(item(4096))).toBeGreaterThan(65_536n);
  });
});
