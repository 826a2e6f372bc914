import { setTimeout as sleep } from 'node:timers/promises';
import { RpcEndpointPool, type RpcCaller, FailoverJsonRpcProvider } from '@facilitator/evm-chain';
import { resolveSendingOptions } from './sending-options';
import { SyncSender } from './sync-sender';

/** One endpoint whose synchronous send answers (or fails) after `ms`, as a node would once the block comes. */
function providerAnswering(ms: number, answer: () => unknown): { provider: FailoverJsonRpcProvider; calls: string[] } {
  const calls: string[] = [];
  const client: RpcCaller = {
    call: async <T>(method: string) => {
      calls.push(`call ${method}`);
      return '0x1' as T;
    },
    callAlone: async <T>(method: string) => {
      calls.push(`alone ${method}`);
      await sleep(ms);
      return answer() as T;
    },
    destroy: () => undefined,
  };
  return { provider: new FailoverJsonRpcProvider(new RpcEndpointPool(84532, ['http://node.invalid'], {}, () => client)), calls };
}

const RECEIPT = { transactionHash: '0xaa', blockNumber: '0x5', blockHash: '0xbb', status: '0x1', gasUsed: '0x5208', logs: [] };

describe('SyncSender', () => {
  it('sends alone (never batched), returns once accepted, and hands over the receipt when the block comes', async () => {
    const { provider, calls } = providerAnswering(300, () => RECEIPT);
    const sender = new SyncSender(resolveSendingOptions({ syncAcceptMs: 50 }));
    await sender.send(84532, provider, '0xraw', '0xaa');
    expect(calls).toEqual(['alone eth_sendRawTransactionSync']);
    // send returned on its 50 ms accept timer, before the call's 300 ms answer (timers fire in order, however
    // loaded the machine): the receipt is not here yet
    expect(sender.receiptOf(['0xaa'])).toBeUndefined();
    await sender.arrival(['0xaa']);
    expect(sender.receiptOf(['0xaa'])).toMatchObject({ hash: '0xaa', blockNumber: 5, status: 1 });
    provider.destroy();
  });

  it('has nothing to wait for once a call ended without a receipt (a timeout): the watcher goes back to polling', async () => {
    const { provider } = providerAnswering(100, () => {
      throw new Error('RPC node.invalid did not answer within 100 ms');
    });
    const sender = new SyncSender(resolveSendingOptions({ syncAcceptMs: 20 }));
    await sender.send(84532, provider, '0xraw', '0xaa');
    expect(sender.arrival(['0xaa'])).toBeDefined();
    await sender.arrival(['0xaa']);
    // an ended call must not be offered again: it would end every poll's pause at once
    expect(sender.arrival(['0xaa'])).toBeUndefined();
    expect(sender.receiptOf(['0xaa'])).toBeUndefined();
    provider.destroy();
  });
});
