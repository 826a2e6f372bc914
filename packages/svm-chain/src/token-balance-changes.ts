import type { Address } from '@solana/kit';

/** One token account a transaction touched: its balance before and after, in base units. */
export interface SvmTokenBalanceChange {
  readonly account: Address;
  readonly mint: Address;
  /** the wallet owning the token account, when the node reports it */
  readonly owner?: Address;
  readonly pre: bigint;
  readonly post: bigint;
}

/** The shape of getTransaction's token balances (`meta.preTokenBalances`, `meta.postTokenBalances`). */
export interface NodeTokenBalance {
  readonly accountIndex: number | bigint;
  readonly mint: Address | string;
  readonly owner?: Address | string;
  readonly uiTokenAmount: { readonly amount: string };
}

/**
 * Pairs a transaction's pre and post token balances by account (the message's static accounts, then the
 * addresses its lookup tables loaded, writable first: how the node numbers them). An account made by the
 * transaction has no pre balance (0 before); one it closed has no post balance (0 after).
 */
export function tokenBalanceChanges(accountKeys: readonly (Address | string)[], pre: readonly NodeTokenBalance[], post: readonly NodeTokenBalance[]): SvmTokenBalanceChange[] {
  const byIndex = new Map<number, { mint: string; owner?: string; pre: bigint; post: bigint }>();
  const entry = (balance: NodeTokenBalance) => {
    const index = Number(balance.accountIndex);
    let found = byIndex.get(index);
    if (!found) {
      found = { mint: balance.mint, ...(balance.owner ? { owner: balance.owner } : {}), pre: 0n, post: 0n };
      byIndex.set(index, found);
    }
    return found;
  };
  for (const balance of pre) entry(balance).pre = BigInt(balance.uiTokenAmount.amount);
  for (const balance of post) entry(balance).post = BigInt(balance.uiTokenAmount.amount);
  return [...byIndex]
    .sort(([a], [b]) => a - b)
    .map(([index, change]) => {
      const account = accountKeys[index];
      if (account === undefined) throw new Error(`a token balance names account ${index}, which the transaction does not have`);
      return {
        account: account as Address,
        mint: change.mint as Address,
        ...(change.owner ? { owner: change.owner as Address } : {}),
        pre: change.pre,
        post: change.post,
      };
    });
}
