// A Permit2 payment and the chain as its mechanism reads it, in memory, for the unit tests of exact-permit2
// and upto-permit2: the logs Permit2, the token and the proxies emit, and a ContractReads whose answers the
// test sets.
import type { ChainLog, FoundLog, MinedTransaction } from '@facilitator/evm-chain';
import type { ContractReads } from '../chain-port';
import { exactPermit2 } from '../exact-permit2';
import { X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import { topicOf } from '../permit2/selector';
import { uptoPermit2 } from '../upto-permit2';

export const NETWORK = { chainId: 84532, tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' };
export const TOKEN = NETWORK.tokenAddress;
export const PAYER = '0x' + '11'.repeat(20);
export const PAYEE = '0x' + '22'.repeat(20);
export const AMOUNT = 1_000_000n;
/** word 5, bit 3 of the payer's unordered nonces */
export const NONCE = (5n << 8n) + 3n;
export const SIGNATURE = '0x' + 'a1'.repeat(32) + '3b'.repeat(32) + '1b';

/** The payment as a settlement stores it, read back by its mechanism. */
export function permit2Payment(overrides: { nonce?: bigint; amount?: bigint; to?: string; signature?: string } = {}) {
  return exactPermit2.fromStored(
    {
      permit2Authorization: {
        from: PAYER,
        permitted: { token: TOKEN, amount: String(overrides.amount ?? AMOUNT) },
        spender: X402_EXACT_PERMIT2_PROXY,
        nonce: String(overrides.nonce ?? NONCE),
        deadline: '1900000000',
        witness: { to: overrides.to ?? PAYEE, validAfter: '0' },
      },
      signature: overrides.signature ?? SIGNATURE,
    },
    NETWORK,
  );
}

/** the facilitator an upto payer names: the only sender of its settle */
export const FACILITATOR = '0x' + '33'.repeat(20);

/** An upto payment of a maximum (AMOUNT unless overridden) as a settlement stores it, read back by its mechanism. */
export function uptoPayment(overrides: { nonce?: bigint; maximum?: bigint; to?: string; facilitator?: string; signature?: string } = {}) {
  return uptoPermit2.fromStored(
    {
      permit2Authorization: {
        from: PAYER,
        permitted: { token: TOKEN, amount: String(overrides.maximum ?? AMOUNT) },
        spender: X402_UPTO_PERMIT2_PROXY,
        nonce: String(overrides.nonce ?? NONCE),
        deadline: '1900000000',
        witness: { to: overrides.to ?? PAYEE, facilitator: overrides.facilitator ?? FACILITATOR, validAfter: '0' },
      },
      signature: overrides.signature ?? SIGNATURE,
    },
    NETWORK,
  );
}

const word = (address: string) => '0x' + address.slice(2).toLowerCase().padStart(64, '0');
const TRANSFER_TOPIC = topicOf('Transfer(address,address,uint256)');

export function transferLog(from: string, to: string, value: bigint, index = 0, token = TOKEN): ChainLog {
  return { address: token, topics: [TRANSFER_TOPIC, word(from), word(to)], data: '0x' + value.toString(16).padStart(64, '0'), index };
}

/** A proxy's argument-less event after the transfer it made (the exact proxy's unless named). */
export function settledLog(index = 1, event: 'Settled()' | 'SettledWithPermit()' = 'Settled()', proxy = X402_EXACT_PERMIT2_PROXY): ChainLog {
  return { address: proxy, topics: [topicOf(event)], data: '0x', index };
}

/** Reads answered from what the test put in: Permit2's nonce bitmaps, the mined transactions and their logs. */
export class FakeContractReads implements ContractReads {
  /** Permit2's bitmap words by `${owner}:${wordPosition}` */
  readonly bitmaps = new Map<string, bigint>();
  readonly transactions = new Map<string, MinedTransaction>();
  readonly asked: string[] = [];

  /** the nonce's bit set, as a transfer or an invalidation sets it */
  spend(owner: string, nonce: bigint): void {
    const key = `${owner}:${nonce >> 8n}`;
    this.bitmaps.set(key, (this.bitmaps.get(key) ?? 0n) | (1n << (nonce & 0xffn)));
  }

  /** answers nonceBitmap(owner, wordPosition) only: the one read of Permit2's the mechanism makes */
  async readContract(to: string, data: string): Promise<string> {
    this.asked.push(`readContract(${to},${data.slice(0, 10)})`);
    const owner = '0x' + data.slice(34, 74);
    const position = BigInt('0x' + data.slice(74, 138));
    return '0x' + (this.bitmaps.get(`${owner}:${position}`) ?? 0n).toString(16).padStart(64, '0');
  }

  /** every log of every mined transaction that matches (topics compared case-insensitively) */
  async recentLogs(address: string, topics: ReadonlyArray<string | null>): Promise<FoundLog[]> {
    this.asked.push(`recentLogs(${address})`);
    const matches = (log: ChainLog) =>
      log.address === address.toLowerCase() && topics.every((topic, i) => topic === null || log.topics[i]?.toLowerCase() === topic.toLowerCase());
    return [...this.transactions.values()]
      .filter((tx) => tx.succeeded)
      .flatMap((tx) => tx.logs.filter(matches).map((log) => ({ ...log, transactionHash: tx.hash, blockNumber: tx.blockNumber })));
  }

  async minedTransaction(hash: string): Promise<MinedTransaction | undefined> {
    this.asked.push(`minedTransaction(${hash})`);
    return this.transactions.get(hash);
  }

  mine(tx: Omit<MinedTransaction, 'succeeded' | 'blockNumber'> & Partial<MinedTransaction>): void {
    this.transactions.set(tx.hash, { succeeded: true, blockNumber: 100, ...tx });
  }
}
