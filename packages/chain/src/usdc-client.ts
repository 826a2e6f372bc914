import type { JsonRpcProvider } from 'ethers';
import type { RpcCaller } from './rpc';
import type { TransferAuthorization } from '@facilitator/core';
import { fiatTokenInterface, TRANSFER_WITH_AUTHORIZATION_BYTES } from './token-abi';
import { addressWord, authorizationStateData, bytes32Word, decodeUint, encodeCall, SELECTORS, TRANSFER_TOPIC, uintWord } from './token-calldata';
import { revertReasonOf } from './sending/revert-reason';

/** How far back to look for the transaction that used an authorization (about 5.5 hours of Base blocks). */
const AUTHORIZATION_LOOKBACK_BLOCKS = 10_000;

export interface AuthorizationUse {
  transactionHash: string;
  blockNumber: number;
  /** what the transaction moved from the payer to the merchant, if anything */
  paidToMerchant: bigint;
  /** the transaction's `to` (lowercase), when its receipt was found: our treasury's address means our own settlement executor */
  to?: string;
}

/**
 * Reads and calldata for the one token a network settles (Circle's FiatTokenV2_2): the one token reader,
 * for settlement (worker, CLI) and verification (RpcChainReader) alike.
 */
export class UsdcClient {
  /**
   * `calls` carries the token's `eth_call`s: by default ethers' `send` (its `call` formats and resolves the
   * request first, which costs more than the call; a revert still comes back as ethers' CALL_EXCEPTION);
   * verification's hot path passes its lean batching client instead.
   */
  constructor(
    readonly provider: JsonRpcProvider,
    readonly tokenAddress: string,
    private readonly calls: Pick<RpcCaller, 'call'> = { call: <T>(method: string, params: unknown[]) => provider.send(method, params) as Promise<T> },
  ) {}

  private call(data: string, from?: string): Promise<string> {
    return this.calls.call<string>('eth_call', [{ ...(from ? { from } : {}), to: this.tokenAddress, data }, 'latest']);
  }

  /** The token's EIP-712 domain name and version, as it answers them. */
  async eip712NameAndVersion(): Promise<{ name: string; version: string }> {
    const read = async (fn: 'name' | 'version') => fiatTokenInterface.decodeFunctionResult(fn, await this.call(fiatTokenInterface.encodeFunctionData(fn)))[0] as string;
    const [name, version] = await Promise.all([read('name'), read('version')]);
    return { name, version };
  }

  async allowance(owner: string, spender: string): Promise<bigint> {
    return decodeUint(await this.call(encodeCall(SELECTORS.allowance, [addressWord(owner), addressWord(spender)])));
  }

  async balanceOf(account: string): Promise<bigint> {
    return decodeUint(await this.call(encodeCall(SELECTORS.balanceOf, [addressWord(account)])));
  }

  async isAuthorizationUsed(authorizer: string, nonce: string): Promise<boolean> {
    return decodeUint(await this.call(authorizationStateData(authorizer, nonce))) !== 0n;
  }

  transferFromData(from: string, to: string, value: bigint): string {
    return encodeCall(SELECTORS.transferFrom, [addressWord(from), addressWord(to), uintWord(value)]);
  }

  /**
   * The (v, r, s) overload for a 65-byte ECDSA signature whose v is 27 or 28 (cheaper, and the token packs
   * it back into the very same bytes); the `bytes` overload, with the signature exactly as signed, for
   * everything else. A contract wallet's 65-byte signature may carry any v (a Safe uses 0, 1 and 31+ for
   * its own signature kinds): the token hands those bytes to the wallet's ERC-1271 check unchanged, which
   * is what verification asked the wallet too, so verify and settle agree on every signature.
   */
  transferWithAuthorizationData(auth: TransferAuthorization, signature: string): string {
    if (isPlainEcdsaSignature(signature)) {
      const { v, r, s } = splitSignature(signature);
      return encodeCall(SELECTORS.transferWithAuthorizationVrs, [
        addressWord(auth.from), addressWord(auth.to), uintWord(auth.value), uintWord(auth.validAfter), uintWord(auth.validBefore),
        bytes32Word(auth.nonce), uintWord(v), r, s,
      ]);
    }
    const args = [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce];
    return fiatTokenInterface.encodeFunctionData(TRANSFER_WITH_AUTHORIZATION_BYTES, [...args, signature]);
  }

  /** Whether `account` has code: a contract wallet (or a delegated EOA), whose signatures the token checks by ERC-1271. */
  async hasCode(account: string): Promise<boolean> {
    const code = (await this.provider.send('eth_getCode', [account, 'latest'])) as string;
    return code !== '0x' && code !== '0x0' && code !== '';
  }

  /**
   * Estimates a call as `from` against the pending block: its gas, or the revert reason when it would
   * fail. Errors that are not reverts (the node is down) are thrown. `to` is the token unless given (a
   * payer wallet's factory, for its deployment).
   */
  async estimate(from: string, data: string, to: string = this.tokenAddress): Promise<{ gas: bigint } | { revert: string }> {
    try {
      const gas = (await this.provider.send('eth_estimateGas', [{ from, to, data }, 'pending'])) as string;
      return { gas: BigInt(gas) };
    } catch (err) {
      const reason = revertReasonOf(err);
      if (reason === undefined) throw err;
      return { revert: reason };
    }
  }

  /** Dry-runs a call as `from`; resolves to the revert reason, or undefined when it would succeed. */
  async simulate(from: string, data: string): Promise<string | undefined> {
    try {
      await this.call(data, from);
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
      ...(receipt?.to ? { to: receipt.to.toLowerCase() } : {}),
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
  // compared as topics: Transfer(address indexed from, address indexed to, uint256 value)
  const fromTopic = '0x' + addressWord(from);
  const toTopic = '0x' + addressWord(to);
  let total = 0n;
  for (const log of logs) {
    if (log.address.toLowerCase() !== token.toLowerCase() || log.topics.length !== 3) continue;
    const [topic, sender, recipient] = log.topics.map((t) => t.toLowerCase());
    if (topic === TRANSFER_TOPIC && sender === fromTopic && recipient === toTopic) total += decodeUint(log.data);
  }
  return total;
}

/** 65 bytes with v 27 or 28: what USDC's ECRecover accepts from an ordinary key. */
export function isPlainEcdsaSignature(signature: string): boolean {
  if (signature.length !== 2 + 65 * 2) return false;
  const v = parseInt(signature.slice(130, 132), 16);
  return v === 27 || v === 28;
}

/**
 * r, s and v of a 65-byte signature, v as 27 or 28. A high s is passed on as it is (as ethers did): the
 * pre-flight dry run reports the token's own revert for it, before any fee.
 */
export function splitSignature(signature: string): { v: number; r: string; s: string } {
  const hex = signature.slice(2).toLowerCase();
  const r = hex.slice(0, 64);
  const s = hex.slice(64, 128);
  const rawV = parseInt(hex.slice(128, 130), 16);
  const v = rawV < 27 ? rawV + 27 : rawV;
  if (v !== 27 && v !== 28) throw new Error(`invalid signature v ${rawV}`);
  return { v, r, s };
}

