// eth_sendRawTransactionSync (EIP-7966) on anvil, detected, with the fallback for a node without it.
import { startDevnet, type Devnet } from '@facilitator/evm-devnet';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Wallet } from 'ethers';
import { RpcEndpointPool, FailoverJsonRpcProvider, classifyNodeError } from '@facilitator/evm-chain';
import { resolveSendingOptions } from './sending-options';
import { SyncSender } from './sync-sender';

let devnet: Devnet;
let noSyncNode: http.Server;

beforeAll(async () => {
  devnet = await startDevnet({ blockTime: 1, relayerCount: 1 });
  // a node in front of anvil that does not know eth_sendRawTransactionSync, as many hosted RPCs today
  noSyncNode = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      const calls = Array.isArray(body) ? body : [body];
      const answers = await Promise.all(
        calls.map(async (call: { id: number; method: string; params: unknown[] }) => {
          if (call.method === 'eth_sendRawTransactionSync') return { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'the method eth_sendRawTransactionSync does not exist/is not available' } };
          const upstream = await fetch(devnet.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) });
          return upstream.json();
        }),
      );
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
    });
  });
  await new Promise<void>((resolve) => noSyncNode.listen(0, '127.0.0.1', resolve));
}, 60_000);

afterAll(async () => {
  noSyncNode?.close();
  await devnet?.stop();
});

const providerFor = (url: string) => new FailoverJsonRpcProvider(new RpcEndpointPool(devnet.chainId, [url]), { batchStallTime: 0 });

async function signedTransfer(nonceOffset = 0): Promise<{ raw: string; hash: string }> {
  const relayer = new Wallet(devnet.accounts.relayers[0].privateKey, devnet.provider);
  const nonce = (await devnet.provider.getTransactionCount(relayer.address, 'pending')) + nonceOffset;
  const raw = await relayer.signTransaction({ type: 2, chainId: devnet.chainId, nonce, to: relayer.address, value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n });
  const { keccak256 } = await import('ethers');
  return { raw, hash: keccak256(raw) };
}

it('is detected on anvil: the receipt arrives with the block, without polling', async () => {
  const provider = providerFor(devnet.rpcUrl);
  // accepted after 100 ms: far from the 1 s block, so a loaded machine does not blur "before the block"
  const sender = new SyncSender(resolveSendingOptions({ syncAcceptMs: 100 }));
  const { raw, hash } = await signedTransfer();
  const started = Date.now();
  await sender.send(devnet.chainId, provider, raw, hash);
  // accepted before it is mined (1 s blocks): send does not wait for the block
  expect(Date.now() - started).toBeLessThan(900);
  expect(sender.supportedOn(devnet.chainId)).toBe(true);
  await sender.arrival([hash]);
  expect(sender.receiptOf([hash])).toMatchObject({ hash, status: 1 });
  provider.destroy();
});

it('falls back to the plain broadcast on a node without it, and remembers', async () => {
  const url = `http://127.0.0.1:${(noSyncNode.address() as AddressInfo).port}`;
  const provider = providerFor(url);
  const sender = new SyncSender(resolveSendingOptions({}));
  for (let i = 0; i < 2; i++) {
    const { raw, hash } = await signedTransfer(i);
    await sender.send(devnet.chainId, provider, raw, hash);
    expect(sender.supportedOn(devnet.chainId)).toBe(false);
    expect(sender.arrival([hash])).toBeUndefined();
  }
  await new Promise((r) => setTimeout(r, 2_200));
  expect(await devnet.provider.getTransactionCount(devnet.accounts.relayers[0].address, 'latest')).toBe(await devnet.provider.getTransactionCount(devnet.accounts.relayers[0].address, 'pending'));
  provider.destroy();
});

it("passes the node's refusal on as ethers gives it for eth_sendRawTransaction (same classification)", async () => {
  const provider = providerFor(devnet.rpcUrl);
  const sender = new SyncSender(resolveSendingOptions({}));
  const { raw, hash } = await signedTransfer(-1); // a nonce already used
  const error = await sender.send(devnet.chainId, provider, raw, hash).then(() => undefined, (e: unknown) => e);
  expect(error).toBeDefined();
  expect(classifyNodeError(error).category).toBe('nonce_too_low');
  provider.destroy();
});
