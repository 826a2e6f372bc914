import { bannerLines, type BannerFacts } from './banner';

const CIRCLE = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const facts: BannerFacts = {
  apiUrl: 'http://127.0.0.1:4020',
  rpcUrl: 'http://127.0.0.1:8545',
  chainId: 84532,
  token: CIRCLE,
  circleUsdc: CIRCLE,
  accounts: [],
  workerMetricsUrl: 'http://127.0.0.1:9464/metrics',
  workerMetricsOff: 'off (WORKER_METRICS_PORT=0)',
  admin: { username: 'admin', password: 'dev-admin-password' },
  devnetFile: '/repo/.devnet/devnet.json',
  services: [],
};

describe('the dev stack banner', () => {
  it('lists the pages, and says stock x402 code works only when the USDC is at Circle’s address', () => {
    const text = bannerLines(facts).join('\n');
    for (const page of ['/docs', '/status', '/merchant', '/admin/queues']) expect(text).toContain(`page         http://127.0.0.1:4020${page}`);
    expect(text).toContain(`USDC         ${CIRCLE}, Circle's Base Sepolia address (EIP-712 "USDC" version "2"): stock x402 code`);
    const elsewhere = bannerLines({ ...facts, token: '0x' + '12'.repeat(20) }).join('\n');
    expect(elsewhere).toContain(`USDC         0x${'12'.repeat(20)}\n`);
    expect(elsewhere).not.toContain('stock x402 code');
  });

  it("names the worker's metrics, or why they are off", () => {
    expect(bannerLines(facts).join('\n')).toContain('worker http://127.0.0.1:9464/metrics (fees, settlements)');
    const busy = bannerLines({ ...facts, workerMetricsUrl: undefined, workerMetricsOff: 'off: port 9464 is in use (set WORKER_METRICS_PORT)' });
    expect(busy.join('\n')).toContain('worker off: port 9464 is in use (set WORKER_METRICS_PORT)');
  });
});
