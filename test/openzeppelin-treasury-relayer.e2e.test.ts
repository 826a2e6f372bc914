// Issue 40, item 6: with TRANSACTION_PROVIDER=openzeppelin-relayer the worker holds no key, but OZ_RELAYER_API_KEY
// reaches every relayer of the server: when one of them signs as the treasury, that API key can move every
// merchant's allowance. The worker refuses to start then unless the operator opts in (OZ_RELAYER_ALLOW_TREASURY),
// and with the opt-in it says at start-up what the key can do. The local relayer server speaks the real protocol.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startOpenZeppelinRelayerServer, type LocalRelayerServer } from '@facilitator/relayer-openzeppelin/testing';
import { startTestStack, workerEnvWithoutTreasuryKey, type TestStack } from './support/test-stack';
import { startWorkerProcess } from './support/worker-process';

let stack: TestStack;
let server: LocalRelayerServer;

beforeAll(async () => {
  // the executor deployed and the treasury delegated to it: the atomic path sends with relayer keys alone
  stack = await startTestStack({ executor: true });
  const { treasury, relayers } = stack.devnet.accounts;
  // the treasury is one of the server's relayers, though not one the worker is configured to send through
  server = await startOpenZeppelinRelayerServer({
    rpcUrl: stack.devnet.rpcUrl,
    apiKey: `oz-${randomBytes(8).toString('hex')}`,
    relayers: [{ id: 'treasury', privateKey: treasury.privateKey }, ...relayers.map((r, i) => ({ id: `relayer-${i + 1}`, privateKey: r.privateKey }))],
  });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await stack?.stop();
});

function ozEnv(extra: Record<string, string> = {}): Record<string, string> {
  const { RELAYER_PRIVATE_KEYS: _keys, ...rest } = workerEnvWithoutTreasuryKey(stack.env);
  return { ...rest, TRANSACTION_PROVIDER: 'openzeppelin-relayer', OZ_RELAYER_URL: server.url, OZ_RELAYER_API_KEY: server.apiKey, OZ_RELAYER_IDS_84532: 'relayer-1', ...extra };
}

it('refuses to start when a relayer the API key reaches is the treasury and the operator did not opt in', async () => {
  const error = (await startWorkerProcess(ozEnv()).then(
    () => undefined,
    (e: Error) => e,
  )) as Error;
  expect(error?.message).toMatch(/exited with 1 before starting/);
  expect(error.message).toContain('transaction provider error: relayer treasury of the OpenZeppelin Relayer signs as the treasury');
  expect(error.message).toContain('OZ_RELAYER_ALLOW_TREASURY=true');
});

it('starts with OZ_RELAYER_ALLOW_TREASURY=true and says that the API key is a treasury credential', async () => {
  const worker = await startWorkerProcess(ozEnv({ OZ_RELAYER_ALLOW_TREASURY: 'true' }));
  try {
    // said right after "worker started", which is what startWorkerProcess waits for
    const said = () => worker.lines.find((l) => l.includes('OZ_RELAYER_API_KEY is a treasury credential'));
    for (let i = 0; i < 100 && !said(); i++) await sleep(20);
    const line = said();
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: 'warn', treasury_relayers: ['treasury'], canDo: expect.stringContaining("every merchant's whole allowance") });
    // the key itself is never printed
    expect(worker.lines.some((l) => l.includes(server.apiKey))).toBe(false);
  } finally {
    await worker.stop();
  }
});

// Issue 40 (review of item 6): the start-up check ran once, but the API key can create relayers later
it('stops sending when a treasury relayer appears on the server after start-up, and says so; resumes once it is gone', async () => {
  const { treasury, merchant } = stack.devnet.accounts;
  server.removeRelayer('treasury');
  const worker = await startWorkerProcess(ozEnv({ EXECUTOR_RECHECK_MS: '1000' }));
  const lineWith = (text: string) => worker.lines.find((l) => l.includes(text));
  const settle = async () => {
    const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
    expect(v.status).toBe(200);
    void stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: merchant.address }).then((r) => r);
    for (let i = 0; i < 300; i++) {
      const row = await stack.db.prisma.settlement.findFirst({ where: { verificationId: v.body.verification_id } });
      if (row) return row.id;
      await sleep(20);
    }
    throw new Error('no settlement');
  };
  const stateAfter = async (id: string, ms: number) => {
    for (let waited = 0; waited < ms; waited += 100) {
      const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id } });
      if (row.state === 'settled' || row.state === 'failed') return row.state;
      await sleep(100);
    }
    return (await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id } })).state;
  };
  try {
    // sending works while no relayer of the server is the treasury
    const before = await settle();
    expect(await stateAfter(before, 30_000)).toBe('settled');
    const sentBefore = server.transactions().length;
    expect(sentBefore).toBeGreaterThan(0);

    // the API key creates a relayer with the treasury's key
    server.addRelayer({ id: 'treasury-later', privateKey: treasury.privateKey });
    for (let i = 0; i < 100 && !lineWith('now signs as the treasury'); i++) await sleep(50);
    expect(JSON.parse(lineWith('now signs as the treasury')!)).toMatchObject({ level: 'error', treasury_relayers: ['treasury-later'] });
    const during = await settle();
    expect(await stateAfter(during, 4_000)).not.toBe('settled');
    expect(server.transactions().length).toBe(sentBefore);

    server.removeRelayer('treasury-later');
    for (let i = 0; i < 100 && !lineWith('sending resumes'); i++) await sleep(50);
    expect(lineWith('sending resumes')).toBeDefined();
  } finally {
    await worker.stop();
    server.addRelayer({ id: 'treasury', privateKey: treasury.privateKey });
  }
}, 90_000);
