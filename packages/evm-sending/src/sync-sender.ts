import { setTimeout as sleep } from 'node:timers/promises';
import type { JsonRpcProvider } from 'ethers';
import { JsonRpcError, FailoverJsonRpcProvider } from '@facilitator/evm-chain';
import { minedReceiptFromRpc, type MinedTransactionReceipt } from './mined-receipt';
import type { ResolvedSendingOptions } from './sending-options';

interface Arrival {
  receipt?: MinedTransactionReceipt;
  /** the synchronous call ended (with a receipt or not) */
  done: boolean;
  /** resolves when the synchronous call ended, with a receipt or not */
  ended: Promise<void>;
}

/** How long a receipt that nobody asked for is kept. */
const KEEP_MS = 60_000;

/**
 * Sends signed transactions with `eth_sendRawTransactionSync` (EIP-7966) where the network's node has it,
 * so that the transaction's receipt arrives the moment its block (or Flashblock) includes it, instead of
 * at the next receipt poll. Support is detected, not configured: the first "method not found" on a network
 * turns it off there, and the plain broadcast is used. A synchronous call that times out is harmless: the
 * transaction was accepted, and the outcome watcher keeps polling for it.
 */
export class SyncSender {
  private readonly supported = new Map<number, boolean>();
  private readonly arrivals = new Map<string, Arrival>();

  constructor(private readonly options: ResolvedSendingOptions) {}

  /** Whether the network is known to have it (undefined until the first transaction there). */
  supportedOn(chainId: number): boolean | undefined {
    return this.supported.get(chainId);
  }

  /**
   * Hands the transaction to the node. Returns when the node accepted it (or mined it); throws the node's
   * refusal as ethers would have for eth_sendRawTransaction, so that it is classified the same way.
   */
  async send(chainId: number, provider: JsonRpcProvider, rawTransaction: string, hash: string): Promise<void> {
    if (!(provider instanceof FailoverJsonRpcProvider) || this.supported.get(chainId) === false) {
      await provider.send('eth_sendRawTransaction', [rawTransaction]);
      return;
    }
    const arrival: Arrival = { done: false, ended: Promise.resolve() };
    let takenAsAccepted = false;
    const call = provider.pool.sendSync(rawTransaction, this.options.syncTimeoutMs);
    arrival.ended = call.then(
      (raw) => {
        arrival.receipt = minedReceiptFromRpc(raw) ?? undefined;
      },
      (error: unknown) => {
        // after the accept window: the outcome watcher hands the transaction to the node again and meets
        // any refusal there, classified; a timeout while waiting for the block needs nothing
        if (takenAsAccepted && error instanceof JsonRpcError) this.options.logger.warn('the node refused a transaction after accepting it seemed likely', { chainId, hash, error: error.message });
      },
    ).finally(() => {
      arrival.done = true;
    });
    const first = await Promise.race([call.then((raw) => ({ raw }), (error: unknown) => ({ error })), sleep(this.options.syncAcceptMs).then(() => undefined)]);
    if (first && 'error' in first) {
      // the endpoint did not answer: every endpoint gets the plain broadcast (the pool skips the broken one)
      if (!(first.error instanceof JsonRpcError)) {
        await provider.send('eth_sendRawTransaction', [rawTransaction]);
        return;
      }
      if (isMethodMissing(first.error)) {
        this.supported.set(chainId, false);
        this.options.logger.info('the node has no eth_sendRawTransactionSync: broadcasting and polling for receipts', { chainId });
        await provider.send('eth_sendRawTransaction', [rawTransaction]);
        return;
      }
      throw asEthersError(provider, rawTransaction, first.error);
    }
    takenAsAccepted = true;
    if (!this.supported.get(chainId)) this.options.logger.info('sending with eth_sendRawTransactionSync: receipts arrive on inclusion', { chainId });
    this.supported.set(chainId, true);
    this.arrivals.set(hash, arrival);
    setTimeout(() => this.arrivals.delete(hash), KEEP_MS).unref();
  }

  /** The receipt a synchronous call brought for one of these hashes, if one did. */
  receiptOf(hashes: readonly string[]): MinedTransactionReceipt | undefined {
    for (const hash of hashes) {
      const receipt = this.arrivals.get(hash)?.receipt;
      if (receipt) return receipt;
    }
    return undefined;
  }

  /** Resolves when a pending synchronous call for one of these hashes ends; undefined when none is pending. */
  arrival(hashes: readonly string[]): Promise<void> | undefined {
    // only calls still running: an ended one would end every pause at once (a busy loop)
    const pending = hashes.map((h) => this.arrivals.get(h)).filter((a): a is Arrival => a !== undefined && !a.done);
    return pending.length > 0 ? Promise.race(pending.map((a) => a.ended)) : undefined;
  }
}

/** "Method not found" (-32601), "not supported" (-32004), or a provider's own wording of either. */
function isMethodMissing(error: unknown): boolean {
  if (!(error instanceof JsonRpcError)) return false;
  if (error.code === -32601 || error.code === -32004) return true;
  return /(method|eth_sendRawTransactionSync).*(not (found|supported|available|allowed|enabled|exist|whitelisted)|does not exist|disabled|unsupported|unknown)|unsupported method|unknown method/i.test(error.message);
}

/** A node's refusal in the shape ethers gives eth_sendRawTransaction's (what classifyNodeError reads). */
function asEthersError(provider: JsonRpcProvider, rawTransaction: string, error: unknown): unknown {
  if (!(error instanceof JsonRpcError)) return error;
  return provider.getRpcError(
    { method: 'eth_sendRawTransaction', params: [rawTransaction], id: 1, jsonrpc: '2.0' },
    { id: 1, error: { code: error.code, message: error.message, data: error.data } },
  );
}
