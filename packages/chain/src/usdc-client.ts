import { Signature, type JsonRpcProvider } from 'ethers';
import type { TransferAuthorization } from '@facilitator/core';
import { fiatTokenInterface, TRANSFER_WITH_AUTHORIZATION_BYTES, TRANSFER_WITH_AUTHORIZATION_VRS } from './token-abi';

/** How far back to look for the transaction that used an authorization (about 5.5 hours of Base blocks). */
const AUTHORIZATION_LOOKBACK_BLOCKS = 10_000;

export interface AuthorizationUse {
  transactionHash: string;
  blockNumber: number;
  /** what the transaction moved from the payer to the merchant, if anything */
  paidToMerchant: bigint;
}

/** Reads and calldata for the one token a network settles (Circle's FiatTokenV2_2). */
export class UsdcClient {
  constructor(
    readonly provider: JsonRpcProvider,
    readonly tokenAddress: string,
  ) {}

  private async read<T>(fn: string, args: unknown[]): Promise<T> {
    const data = await this.provider.call({ to: this.tokenAddress, data: fiatTokenInterface.encodeFunctionData(fn, args) });
    return fiatTokenInterface.decodeFunctionResult(fn, data)[0] as T;
  }

  allowance(owner: string, spender: string): Promise<bigint> {
    return this.read('allowance', [owner, spender]);
  }

  balanceOf(account: string): Promise<bigint> {
    return this.read('balanceOf', [account]);
  }

  isAuthorizationUsed(authorizer: string, nonce: string): Promise<boolean> {
    return this.read('authorizationState', [authorizer, nonce]);
  }

  transferFromData(from: string, to: string, value: bigint): string {
    return fiatTokenInterface.encodeFunctionData('transferFrom', [from, to, value]);
  }

  /** The (v, r, s) overload for 65-byte ECDSA signatures; the `bytes` overload (contract wallets) otherwise. */
  transferWithAuthorizationData(auth: TransferAuthorization, signature: string): string {
    const args = [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce];
    if (signature.length === 2 + 65 * 2) {
      const { v, r, s } = Signature.from(signature);
      return fiatTokenInterface.encodeFunctionData(TRANSFER_WITH_AUTHORIZATION_VRS, [...args, v, r, s]);
    }
    return fiatTokenInterface.encodeFunctionData(TRANSFER_WITH_AUTHORIZATION_BYTES, [...args, signature]);
  }

  /** Dry-runs a call as `from`; resolves to the revert reason, or undefined when it would succeed. */
  async simulate(from: string, data: string): Promise<string | undefined> {
    try {
      await this.provider.call({ from, to: this.tokenAddress, data });
      return undefined;
    } catch (err) {
      const reason = revertReasonOf(err);
      if (reason === undefined) throw err;
      return reason;
    }
  }

  /** The transaction that used this authorization on chain (ours or anyone's), with what it paid the merchant. */
  async findAuthorizationUse(authorizer: string, nonce: string, merchant: string): Promise<AuthorizationUse | undefined> {
    const latest = await this.provider.getBlockNumber();
    const used = fiatTokenInterface.getEvent('AuthorizationUsed')!;
    const logs = await this.provider.getLogs({
      address: this.tokenAddress,
      fromBlock: Math.max(0, latest - AUTHORIZATION_LOOKBACK_BLOCKS),
      toBlock: latest,
      topics: fiatTokenInterface.encodeFilterTopics(used, [authorizer, nonce]),
    });
    const log = logs[0];
    if (!log) return undefined;
    const receipt = await this.provider.getTransactionReceipt(log.transactionHash);
    return {
      transactionHash: log.transactionHash,
      blockNumber: log.blockNumber,
      paidToMerchant: receipt ? paidBetween(receipt.logs, this.tokenAddress, authorizer, merchant) : 0n,
    };
  }
}

/** Sum of token Transfer events from `from` to `to` among a transaction's logs. */
export function paidBetween(
  logs: ReadonlyArray<{ address: string; topics: readonly string[]; data: string }>,
  token: string,
  from: string,
  to: string,
): bigint {
  let total = 0n;
  for (const log of logs) {
    if (log.address.toLowerCase() !== token.toLowerCase()) continue;
    const parsed = fiatTokenInterface.parseLog({ topics: [...log.topics], data: log.data });
    if (parsed?.name !== 'Transfer') continue;
    if ((parsed.args[0] as string).toLowerCase() === from.toLowerCase() && (parsed.args[1] as string).toLowerCase() === to.toLowerCase()) {
      total += parsed.args[2] as bigint;
    }
  }
  return total;
}

/** The reason string of a reverted call, or undefined when the error is not a revert (e.g. the node is down). */
export function revertReasonOf(err: unknown): string | undefined {
  const e = err as { code?: string; reason?: string | null; shortMessage?: string; info?: { error?: { message?: string } } };
  if (e?.code !== 'CALL_EXCEPTION') return undefined;
  return e.reason ?? e.info?.error?.message ?? e.shortMessage ?? 'execution reverted';
}
