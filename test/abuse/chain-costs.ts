// What an attack cost our keys on chain, read from the blocks themselves (not from our own records), and
// the waits the failure-accounting abuse tests share.
import { hexlify, randomBytes } from 'ethers';
import type { Devnet } from '@facilitator/evm-devnet';
import { authorizationToJson } from '@facilitator/core';
import { setTimeout as sleep } from 'node:timers/promises';
import { PRICE_UNITS, type TestStack } from '../support/test-stack';

export interface ChainCost {
  /** transactions mined from the given keys */
  transactions: number;
  reverted: number;
  gasUsed: bigint;
  /** gas used times the price paid, in wei */
  wei: bigint;
}

/** The transactions our keys (`from`) got mined in blocks after `afterBlock`, and the gas they paid. */
export async function chainCostOf(devnet: Devnet, from: readonly string[], afterBlock: number): Promise<ChainCost> {
  const keys = new Set(from.map((a) => a.toLowerCase()));
  const cost: ChainCost = { transactions: 0, reverted: 0, gasUsed: 0n, wei: 0n };
  const head = await devnet.provider.getBlockNumber();
  for (let n = afterBlock + 1; n <= head; n++) {
    const block = await devnet.provider.getBlock(n, true);
    for (const tx of block?.prefetchedTransactions ?? []) {
      if (!keys.has(tx.from.toLowerCase())) continue;
      const receipt = await devnet.provider.getTransactionReceipt(tx.hash);
      if (!receipt) continue;
      cost.transactions++;
      if (receipt.status === 0) cost.reverted++;
      cost.gasUsed += receipt.gasUsed;
      cost.wei += receipt.gasUsed * receipt.gasPrice;
    }
  }
  return cost;
}

/** Our keys: the treasury and every relayer. */
export function ourKeys(stack: TestStack): string[] {
  return [stack.devnet.accounts.treasury.address, ...stack.devnet.accounts.relayers.map((r) => r.address)];
}

/** Waits (polling the table, bounded) until none of these settlements is still in progress. */
export async function untilFinal(stack: TestStack, ids: string[], timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await stack.db.prisma.settlement.count({ where: { id: { in: ids }, state: { notIn: ['settled', 'failed'] } } });
    if (open === 0) break;
    if (Date.now() > deadline) throw new Error(`${open} of ${ids.length} settlements still in progress after ${timeoutMs} ms`);
    await sleep(200);
  }
  return stack.db.prisma.settlement.findMany({ where: { id: { in: ids } }, orderBy: { createdAt: 'asc' } });
}

/** "state/code/reason" → how many, for the report's note. */
export function outcomes(rows: Array<{ state: string; errorCode: string | null; errorDetails: unknown }>): string {
  const counts = new Map<string, number>();
  for (const r of rows) {
    const key = `${r.state}/${r.errorCode ?? '-'}/${(r.errorDetails as { reason?: string } | null)?.reason ?? ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, v]) => `${v} × ${k}`).join('; ');
}

/** A Form B body paying `merchant` PRICE_UNITS from a contract wallet with any signature bytes. */
export function contractWalletPayment(stack: TestStack, wallet: string, merchant: string) {
  const now = Math.floor(Date.now() / 1000);
  const authorization = authorizationToJson({
    from: wallet.toLowerCase(), to: merchant, value: PRICE_UNITS,
    validAfter: BigInt(now - 60), validBefore: BigInt(now + 3600), nonce: hexlify(randomBytes(32)),
  });
  // any bytes: not an ECDSA signature of the wallet, so the token asks the wallet (ERC-1271)
  const payload = { authorization, signature: hexlify(randomBytes(65)) };
  return {
    transaction_hash: authorization.nonce,
    chain: 'layer2-sepolia',
    seller_address: merchant,
    expected_amount: PRICE_UNITS.toString(),
    expected_token: stack.devnet.token,
    metadata: { paymentPayload: { x402Version: 1, scheme: 'exact', network: 'layer2-sepolia', payload } },
  };
}
