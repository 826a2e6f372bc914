// A geth-family pool that holds one pending transaction of a delegated (EIP-7702) account answers a second
// with "in-flight transaction limit reached for delegated accounts". The provider must treat that as a
// wait: keep the signed version, hand it to the node again later, and see it mined — never a failure.
// anvil does not have the limit, so a JSON-RPC proxy in front of it refuses the first broadcasts that way.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseUnits } from 'ethers';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { createProvider, fiatTokenInterface } from '@facilitator/evm-chain';
import { LocalKeyTransactionProvider } from './local-key-transaction-provider';
import { insertDevnetSettlement } from './testing';

const GETH_DELEGATED_LIMIT = 'in-flight transaction limit reached for delegated accounts';
const SEND_METHODS = new Set(['eth_sendRawTransaction', 'eth_sendRawTransactionSync']);

let devnet: Devnet;
let db: TestDatabase;
let proxy: http.Server;
/** broadcasts the proxy still refuses with geth's delegated-account limit */
let refuseNext = 0;
let refused = 0;

beforeAll(async () => {
  [devnet, db] = await Promise.all([startDevnet({ relayerCount: 1, treasuryAllowance: parseUnits('1000', 6) }), createTestDatabase()]);
  proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void answer(Buffer.concat(chunks).toString(), res));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await devnet?.stop();
  await db?.drop();
});

type RpcCall = { id: unknown; method: string };

async function answer(body: string, res: http.ServerResponse): Promise<void> {
  const parsed = JSON.parse(body) as RpcCall | RpcCall[];
  const calls = Array.isArray(parsed) ? parsed : [parsed];
  const answers = await Promise.all(calls.map((call) => forward(call)));
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
}

async function forward(call: RpcCall): Promise<unknown> {
  if (SEND_METHODS.has(call.method) && refuseNext > 0) {
    refuseNext--;
    refused++;
    return { jsonrpc: '2.0', id: call.id, error: { code: -32000, message: GETH_DELEGATED_LIMIT } };
  }
  const response = await fetch(devnet.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) });
  return response.json();
}

const newSettlement = () => insertDevnetSettlement(db.pool, devnet);

it('a broadcast refused for the delegated in-flight limit is a wait: the fee is kept, sent again and mined', async () => {
  const rpc = createProvider(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, devnet.chainId);
  const provider = new LocalKeyTransactionProvider(db.pool, new Map([[devnet.chainId, rpc]]), [devnet.accounts.treasury, ...devnet.accounts.relayers], {
    receiptPollIntervalMs: 20,
    rebroadcastIntervalMs: 100,
    replaceAfterMs: 30_000,
    outcomeTimeoutMs: 15_000,
  });
  try {
    const { treasury, merchant } = devnet.accounts;
    refuseNext = 3;
    const settlementId = await newSettlement();
    const sent = await provider.submit({
      settlementId,
      purpose: 'fee',
      chainId: devnet.chainId,
      from: treasury.address,
      to: devnet.token,
      data: fiatTokenInterface.encodeFunctionData('transferFrom', [merchant.address, treasury.address, 1_000n]),
    });
    const outcome = await provider.waitForOutcome(sent.id, 1);
    const stored = await db.prisma.chainTransaction.findUnique({ where: { id: sent.id }, include: { attempts: true } });
    expect(refused).toBe(3);
    expect(outcome).toMatchObject({ status: 'confirmed', hash: sent.hash });
    // the same signed version was handed to the node again: no bump, no second nonce
    expect(stored!.attempts).toHaveLength(1);
  } finally {
    rpc.destroy();
  }
});
