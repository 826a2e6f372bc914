// Every network of the registry, proved the way it runs (issue 25, item 2): one anvil per network with its
// own chain id and Circle's USDC (FiatTokenV2_2) at the network's own USDC address under its own EIP-712
// name, one API and one keyless worker serving all of them at once with nothing configured per network but
// RPC_URL_<chainId> (no TOKEN_ADDRESS_<chainId>: the registry's address is the token). Each network verifies
// in both forms and settles one payment on the atomic path: one fee and one transfer on its own chain.
import supertest from 'supertest';
import { getAddress } from 'ethers';
import { authorizationToJson, NETWORKS, type NetworkInfo } from '@facilitator/core';
import { loadConfig } from '@facilitator/config';
import { createSilentLogger } from '@facilitator/logging';
import { setUpDevnetExecutor, startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { buildApi } from '../apps/api/src/build-api';
import { createTestDatabase, type TestDatabase } from './support/database';
import { deleteStackQueues, stackEnv, workerEnvWithoutTreasuryKey } from './support/test-stack';
import { until } from './support/until';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process';

const FEE = 10_000n;
const PRICE = 50_000n; // "$0.05": the merchant keeps 40,000 after the fee

interface Served {
  network: NetworkInfo;
  devnet: Devnet;
}

let served: Served[] = [];
let db: TestDatabase | undefined;
let env: Record<string, string> = {};
let api: ReturnType<typeof buildApi> | undefined;
let http: ReturnType<typeof supertest>;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  const started = await Promise.allSettled(
    NETWORKS.map((network) => startDevnet({ chainId: network.chainId, tokenAddress: network.usdc.address, tokenName: network.usdc.eip712.name })),
  );
  served = started.flatMap((s, i) => (s.status === 'fulfilled' ? [{ network: NETWORKS[i], devnet: s.value }] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  db = await createTestDatabase();
  const base = stackEnv(served[0].devnet, db.url, { FEE_AMOUNT: FEE.toString(), SETTLEMENT_MODE: 'atomic' });
  const { RPC_URL_84532: _rpc, TOKEN_ADDRESS_84532: _token, ...rest } = base;
  env = { ...rest, ...Object.fromEntries(served.map(({ network, devnet }) => [`RPC_URL_${network.chainId}`, devnet.rpcUrl])) };
  // the same mnemonic on every anvil: one treasury and one set of relayers serve every network
  await Promise.all(served.map(({ devnet }) => setUpDevnetExecutor(devnet, FEE)));
  api = buildApi(loadConfig(env), createSilentLogger());
  http = supertest(api.app);
  worker = await startWorkerProcess(workerEnvWithoutTreasuryKey(env));
}, 120_000);

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await api?.close();
  await Promise.all(served.map(({ devnet }) => devnet.stop()));
  await deleteStackQueues(env);
  await db?.drop();
});

it('serves every registry network, and only those', () => {
  expect(served.map(({ network }) => network.caip2)).toEqual([
    'eip155:8453',
    'eip155:84532',
    'eip155:137',
    'eip155:80002',
    'eip155:42161',
    'eip155:421614',
    'eip155:43114',
    'eip155:43113',
    'eip155:10',
    'eip155:11155420',
  ]);
});

it('/x402/supported lists each network on x402 v2, and on v1 under the name @x402/evm gives it', async () => {
  const res = await http.get('/x402/supported');
  expect(res.status).toBe(200);
  const kinds = res.body.kinds as Array<{ x402Version: number; scheme: string; network: string }>;
  // upto names the facilitator its payer must sign for: our treasury, the same on every network
  const facilitatorAddress = getAddress(served[0].devnet.accounts.treasury.address);
  const expected = NETWORKS.flatMap((n) => [
    { x402Version: 2, scheme: 'exact', network: n.caip2 },
    { x402Version: 2, scheme: 'upto', network: n.caip2, extra: { facilitatorAddress } },
    ...(n.x402V1Name ? [{ x402Version: 1, scheme: 'exact', network: n.x402V1Name }] : []),
  ]);
  expect(kinds).toEqual(expected);
  expect(kinds.filter((k) => k.x402Version === 1).map((k) => k.network)).toEqual(['base', 'base-sepolia', 'polygon', 'polygon-amoy', 'avalanche', 'avalanche-fuji']);
});

describe.each(NETWORKS.map((n) => [n.label, n] as const))('%s', (_label, network) => {
  const devnetOf = () => served.find((s) => s.network.chainId === network.chainId)!.devnet;

  async function signedPayment() {
    const devnet = devnetOf();
    const signed = await devnet.signTransferAuthorization(devnet.accounts.payer.privateKey, { to: devnet.accounts.merchant.address, value: PRICE });
    return { authorization: authorizationToJson(signed.authorization), signature: signed.signature };
  }

  const formA = (payload: { authorization: unknown; signature: string }) => ({
    payment: { x402Version: 2, payload },
    requirements: { scheme: 'exact', price: '$0.05', network: network.caip2, payTo: devnetOf().accounts.merchant.address, token: getAddress(network.usdc.address) },
  });

  it('verifies Form B under its short name', async () => {
    const devnet = devnetOf();
    const payload = await signedPayment();
    const res = await http.post('/v1/verify').send({
      transaction_hash: (payload.authorization as { nonce: string }).nonce,
      chain: network.legacyName,
      seller_address: devnet.accounts.merchant.address,
      expected_amount: PRICE.toString(),
      expected_token: network.usdc.address,
      metadata: { source: 'test', paymentPayload: { x402Version: 1, scheme: 'exact', network: network.legacyName, payload } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'verified', chain: network.legacyName, verified_token: network.usdc.address.toLowerCase() });
  });

  it('verifies and settles Form A on its own chain: one fee to the treasury, one payment to the merchant', async () => {
    const devnet = devnetOf();
    const { payer, merchant, treasury } = devnet.accounts;
    const before = await Promise.all([payer, merchant, treasury].map((a) => devnet.balanceOf(a.address)));
    const body = formA(await signedPayment());
    const verified = await http.post('/v1/verify').send(body);
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ isValid: true, details: { verified_amount: PRICE.toString(), verified_token: network.usdc.address.toLowerCase() } });

    const settle = await http.post('/v1/settle').send(body);
    expect([200, 202]).toContain(settle.status);
    const id = settle.body.details.settlement_id as string;
    let record: { status: string; details: Record<string, unknown> } = { status: 'pending', details: {} };
    await until(
      `the ${network.label} settlement to end`,
      async () => {
        record = (await http.get(`/v1/settlements/${id}`)).body;
        return record.status !== 'pending';
      },
      60_000,
      async () => `last record ${JSON.stringify(record)}; the worker said:\n${worker?.lines.slice(-8).join('\n')}`,
    );
    expect(record).toMatchObject({ status: 'settled', details: { settled_amount: PRICE.toString(), fee_collection_status: 'collected' } });
    const row = await db!.prisma.settlement.findUniqueOrThrow({ where: { id } });
    expect({ chainId: row.chainId, feeAmount: row.feeAmount }).toEqual({ chainId: network.chainId, feeAmount: FEE.toString() });
    const after = await Promise.all([payer, merchant, treasury].map((a) => devnet.balanceOf(a.address)));
    expect(after.map((b, i) => b - before[i])).toEqual([-PRICE, PRICE - FEE, FEE]);
  });
});
