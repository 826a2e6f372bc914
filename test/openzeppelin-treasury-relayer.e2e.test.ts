// Issue 40, item 6: with TRANSACTION_PROVIDER=openzeppelin-relayer the worker holds no key, but OZ_RELAYER_API_KEY
// reaches every relayer of the server: when one of them signs as the treasury, that API key can move every
// merchant's allowance. The worker refuses to start then unless the operator opts in (OZ_RELAYER_ALLOW_TREASURY),
// and with the opt-in it says at start-up what the key can do. The local relayer server speaks the real protocol.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startOpenZeppelinRelayerServer, type LocalRelayerServer } from '@facilitator/relayer-openzeppelin/testing';
import { startTestStack, workerEnvWithoutTreasuryKey, type TestStack } from './support/test-stack';
import { startWorkerProcess } from './support/worker-process';
import { abuseReport } from './abuse/abuse-report';

let stack: TestStack;
let server: LocalRelayerServer;
// one row per assertion of the three tests below; saved after the clean-up, so a failed row fails the file
const report = abuseReport(
  'credentials-1-treasury-relayer',
  'A treasury relayer on the OpenZeppelin Relayer server',
  "the worker sends through an OpenZeppelin Relayer server one of whose relayers signs with the treasury's key (so OZ_RELAYER_API_KEY can move every merchant's allowance): the worker started without OZ_RELAYER_ALLOW_TREASURY, then with it, then a treasury relayer added to the server after start-up and removed again",
);

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
  report.note('With OZ_RELAYER_ALLOW_TREASURY=true the API key is a treasury credential: keep it as the treasury key is kept (docs/custody.md).');
  report.save();
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
  const message = error?.message ?? '(the worker started)';
  const checks = [
    report.check('worker without OZ_RELAYER_ALLOW_TREASURY', 'exited with 1 before starting', /exited with 1 before starting/.test(message) ? 'exited with 1 before starting' : message),
    report.check("its error names the treasury relayer", true, message.includes('transaction provider error: relayer treasury of the OpenZeppelin Relayer signs as the treasury')),
    report.check('its error names the opt-in', true, message.includes('OZ_RELAYER_ALLOW_TREASURY=true')),
  ];
  expect(error?.message).toMatch(/exited with 1 before starting/);
  expect(error.message).toContain('transaction provider error: relayer treasury of the OpenZeppelin Relayer signs as the treasury');
  expect(error.message).toContain('OZ_RELAYER_ALLOW_TREASURY=true');
  expect(checks.every(Boolean)).toBe(true);
});

it('starts with OZ_RELAYER_ALLOW_TREASURY=true and says that the API key is a treasury credential', async () => {
  const worker = await startWorkerProcess(ozEnv({ OZ_RELAYER_ALLOW_TREASURY: 'true' }));
  try {
    // said right after "worker started", which is what startWorkerProcess waits for
    const said = () => worker.lines.find((l) => l.includes('OZ_RELAYER_API_KEY is a treasury credential'));
    for (let i = 0; i < 100 && !said(); i++) await sleep(20);
    const line = said();
    const warning = line ? (JSON.parse(line) as { level?: string; treasury_relayers?: string[]; canDo?: string }) : undefined;
    const checks = [
      report.check('worker with OZ_RELAYER_ALLOW_TREASURY=true', 'started', worker.lines.some((l) => l.includes('worker started')) ? 'started' : 'not started'),
      report.check('its start-up warning: level, treasury relayers', 'warn ["treasury"]', warning ? `${warning.level} ${JSON.stringify(warning.treasury_relayers)}` : 'no warning'),
      report.check("the warning says the key can move every merchant's whole allowance", true, warning?.canDo?.includes("every merchant's whole allowance") ?? false),
      report.check('lines printing the API key', 0, worker.lines.filter((l) => l.includes(server.apiKey)).length),
    ];
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: 'warn', treasury_relayers: ['treasury'], canDo: expect.stringContaining("every merchant's whole allowance") });
    // the key itself is never printed
    expect(worker.lines.some((l) => l.includes(server.apiKey))).toBe(false);
    expect(checks.every(Boolean)).toBe(true);
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
  const checks: boolean[] = [];
  try {
    // sending works while no relayer of the server is the treasury
    const before = await settle();
    const stateBefore = await stateAfter(before, 30_000);
    const sentBefore = server.transactions().length;
    checks.push(report.check('a settlement while no relayer of the server is the treasury', 'settled', stateBefore));
    checks.push(report.assert('transactions sent through the server for it', 'more than 0', sentBefore, sentBefore > 0));
    expect(stateBefore).toBe('settled');
    expect(sentBefore).toBeGreaterThan(0);

    // the API key creates a relayer with the treasury's key
    server.addRelayer({ id: 'treasury-later', privateKey: treasury.privateKey });
    for (let i = 0; i < 100 && !lineWith('now signs as the treasury'); i++) await sleep(50);
    const stopped = lineWith('now signs as the treasury');
    const said = stopped ? (JSON.parse(stopped) as { level?: string; treasury_relayers?: string[] }) : undefined;
    checks.push(report.check('after a relayer with the treasury key is added: what the worker says', 'error ["treasury-later"]', said ? `${said.level} ${JSON.stringify(said.treasury_relayers)}` : 'nothing'));
    expect(JSON.parse(lineWith('now signs as the treasury')!)).toMatchObject({ level: 'error', treasury_relayers: ['treasury-later'] });
    const during = await settle();
    const stateDuring = await stateAfter(during, 4_000);
    const sentDuring = server.transactions().length - sentBefore;
    checks.push(report.assert('a settlement asked meanwhile, 4 s later', 'not settled', stateDuring, stateDuring !== 'settled'));
    checks.push(report.check('transactions sent through the server meanwhile', 0, sentDuring));
    expect(stateDuring).not.toBe('settled');
    expect(server.transactions().length).toBe(sentBefore);

    server.removeRelayer('treasury-later');
    for (let i = 0; i < 100 && !lineWith('sending resumes'); i++) await sleep(50);
    checks.push(report.check('once it is removed, the worker says sending resumes', true, lineWith('sending resumes') !== undefined));
    expect(lineWith('sending resumes')).toBeDefined();
    expect(checks.every(Boolean)).toBe(true);
  } finally {
    await worker.stop();
    server.addRelayer({ id: 'treasury', privateKey: treasury.privateKey });
  }
}, 90_000);
