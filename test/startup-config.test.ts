// A bad or missing variable stops start-up with one line naming it, for both long-running apps.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const good = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/postgres',
  TREASURY_PRIVATE_KEY: '0x' + '11'.repeat(32),
  WEBHOOK_SECRET: 'a-master-secret-of-at-least-32-characters',
  RPC_URL_84532: 'http://127.0.0.1:1',
};

function start(app: 'api' | 'worker', env: Record<string, string | undefined>) {
  const clean = Object.fromEntries(Object.entries({ ...good, ...env }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return spawnSync(process.execPath, [path.join(ROOT, `apps/${app}/dist/main.js`)], {
    env: { PATH: process.env.PATH ?? '', ...clean },
    encoding: 'utf8',
    timeout: 10_000,
  });
}

const both: Array<[Record<string, string | undefined>, string]> = [
  [{ DATABASE_URL: undefined }, 'configuration error: DATABASE_URL is required but not set'],
  [{ WEBHOOK_SECRET: 'too-short' }, "configuration error: WEBHOOK_SECRET must be at least 32 characters (it is the master key of the merchants' webhook secrets)"],
  [{ RPC_URL_84532: undefined }, 'configuration error: RPC_URL_<chainId> must be set for at least one network (a network is enabled only when its RPC URL is set; chain ids: 8453, 84532, 137, 80002, 42161, 421614, 43114, 43113, 10, 11155420)'],
];
// each app validates only the configuration it uses: the API knows the treasury by address, the worker by key
const cases = {
  api: [
    ...both,
    [{ TREASURY_PRIVATE_KEY: undefined }, 'configuration error: TREASURY_ADDRESS is required but not set'],
    [{ TREASURY_PRIVATE_KEY: undefined, TREASURY_ADDRESS: '0x12' }, 'configuration error: TREASURY_ADDRESS must be a 20-byte 0x-prefixed hex address'],
    [{ PORT: 'http' }, 'configuration error: PORT must be a whole number (got "http")'],
  ],
  worker: [
    ...both,
    [{ TREASURY_PRIVATE_KEY: '0x12' }, 'configuration error: TREASURY_PRIVATE_KEY must be a 32-byte hex private key'],
    // the atomic path needs no treasury key, but keys to send with; the sequential path needs the treasury's
    [{ TREASURY_PRIVATE_KEY: undefined, TREASURY_ADDRESS: '0x' + '22'.repeat(20) }, 'configuration error: RELAYER_PRIVATE_KEYS is required without TREASURY_PRIVATE_KEY (the relayers send every settlement; RELAYER_SIGNERS for keys in KMS or an HSM)'],
    [
      { TREASURY_PRIVATE_KEY: undefined, TREASURY_ADDRESS: '0x' + '22'.repeat(20), RELAYER_PRIVATE_KEYS: '0x' + '33'.repeat(32), SETTLEMENT_MODE: 'sequential' },
      'configuration error: TREASURY_PRIVATE_KEY is required with SETTLEMENT_MODE=sequential (the treasury sends each fee itself); SETTLEMENT_MODE=atomic needs no treasury key in the worker',
    ],
    [{ TREASURY_ADDRESS: '0x' + '22'.repeat(20) }, 'configuration error: TREASURY_ADDRESS does not match TREASURY_PRIVATE_KEY (whose address is 0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a)'],
    [{ WORKER_QUEUES: 'nope' }, 'configuration error: WORKER_QUEUES names an unknown queue "nope" (known: settlement, webhook, maintenance)'],
  ],
} satisfies Record<string, Array<[Record<string, string | undefined>, string]>>;

describe.each(['api', 'worker'] as const)('%s start-up', (app) => {
  it.each(cases[app])('%j stops it with one line naming the variable', (env, line) => {
    const result = start(app, env);
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(line);
  });
});
