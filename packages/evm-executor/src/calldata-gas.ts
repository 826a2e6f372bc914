import type { ExecutorItem } from './executor-calls';

/** Intrinsic gas of calldata (EIP-2028): 16 per non-zero byte, 4 per zero byte. */
export function calldataGas(data: string): bigint {
  const hex = data.startsWith('0x') || data.startsWith('0X') ? data.slice(2) : data;
  let gas = 0;
  for (let i = 0; i + 1 < hex.length; i += 2) gas += hex.charCodeAt(i) === 48 && hex.charCodeAt(i + 1) === 48 ? 4 : 16;
  return BigInt(gas);
}

const word = (value: bigint | string): string => (typeof value === 'bigint' ? value.toString(16) : value.replace(/^0x/i, '')).padStart(64, '0');

/**
 * Calldata gas of one item inside `settle(items)`: its offset in the array's head, its seven head words
 * (the call data's offset among them), the call data's length word and its bytes padded to words. Counted
 * from the words themselves, without the ABI coder (one item per settlement, on the hot path); the offset
 * word is counted as two non-zero bytes, its most for any batch that fits a block.
 */
export function itemCalldataGas(item: ExecutorItem): bigint {
  const data = item.data.replace(/^0x/i, '');
  const padded = data.padEnd(Math.ceil(data.length / 64) * 64, '0');
  const head = [item.payer, item.merchant, item.amount, item.nonce, item.target, 0xe0n, item.gas, BigInt(data.length / 2)].map(word).join('');
  return 30n * 4n + 2n * 16n + calldataGas(head) + calldataGas(padded);
}
