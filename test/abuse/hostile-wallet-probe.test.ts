// Issue 40, 4: a stranger's wallet code is never run as trusted. A counterfactual Safe of the canonical factory
// and singleton (both allow-listed) whose setup names a fallback handler that accepts any signature only at
// tx.gasprice 0. Before: the deploy-then-transfer probe was an eth_call without fee fields (gasprice 0), so it
// passed, our relayer deployed the wallet, the real transfer was then refused, and the deployment counted
// against the factory's budget that honest first-time payers share. Now the probe runs as the real
// transactions (their gas caps, the market's gas price): it fails, nothing is deployed, and the failure counts
// against the wallet (WALLET_PROBE_FAILURES_PER_WALLET, 2 by default) and the merchant, never the factory.
import { randomBytes } from 'node:crypto';
import { hexlify, Interface, Wallet, ZeroAddress } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { wrapErc6492Signature } from '@facilitator/evm-chain';
import { authorizationToJson, type TransferAuthorization } from '@facilitator/core';
import { authorizationDigest, CANONICAL_SAFE, placeCanonicalSafe, safeOwnerSignature } from '../support/canonical-safe';
import { compileTestContract, deploy } from '../support/solidity';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';

let stack: TestStack;
let hostileHandler: string;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const artifact = (p: string) => require(`@safe-global/safe-contracts/build/artifacts/contracts/${p}`) as { abi: unknown[] };
const safeInterface = new Interface(artifact('Safe.sol/Safe.json').abi as never);
const factoryInterface = new Interface(artifact('proxies/SafeProxyFactory.sol/SafeProxyFactory.json').abi as never);

beforeAll(async () => {
  // the atomic path, as deployed (a contract-wallet payer is settled only there); the factory may pay for one
  // deployment in the window: the one an honest first-time payer needs
  stack = await startTestStack({ executor: true });
  await placeCanonicalSafe(stack.devnet.provider);
  const { provider, accounts } = stack.devnet;
  hostileHandler = await (await deploy(provider, accounts.deployer.privateKey, compileTestContract('HostileWallets.sol', 'SimulationOnlyFallbackHandler'))).getAddress();
  await stack.startWorker({ WALLET_DEPLOYS_PER_FACTORY: '1' });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

interface Counterfactual {
  address: string;
  factoryCalldata: string;
  owner: Wallet;
}

/** A funded one-owner Safe of a fresh salt, not deployed, whose fallback handler is `handler`. */
async function counterfactualSafe(handler: string): Promise<Counterfactual> {
  const owner = Wallet.createRandom();
  const initializer = safeInterface.encodeFunctionData('setup', [[owner.address], 1, ZeroAddress, '0x', handler, ZeroAddress, 0, ZeroAddress]);
  const factoryCalldata = factoryInterface.encodeFunctionData('createProxyWithNonce', [CANONICAL_SAFE.singleton, initializer, BigInt(hexlify(randomBytes(8)))]);
  const [predicted] = factoryInterface.decodeFunctionResult('createProxyWithNonce', await stack.devnet.provider.call({ to: CANONICAL_SAFE.factory, data: factoryCalldata }));
  const address = (predicted as string).toLowerCase();
  await stack.devnet.mint(address, 10n * PRICE_UNITS);
  return { address, factoryCalldata, owner: new Wallet(owner.privateKey) };
}

/** Verifies and settles one payment of the wallet; resolves to its final settlement row and the verify status. */
async function pay(wallet: Counterfactual) {
  const authorization: TransferAuthorization = {
    from: wallet.address,
    to: stack.devnet.accounts.merchant.address,
    value: PRICE_UNITS,
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
    nonce: hexlify(randomBytes(32)),
  };
  const inner = await safeOwnerSignature(wallet.owner, stack.devnet.chainId, wallet.address, authorizationDigest(stack.devnet.eip712Domain, authorization));
  const signature = wrapErc6492Signature(CANONICAL_SAFE.factory, wallet.factoryCalldata, inner);
  const verified = await stack.http.post('/v1/verify').send({
    transaction_hash: authorization.nonce,
    chain: 'layer2-sepolia',
    seller_address: stack.devnet.accounts.merchant.address,
    expected_amount: PRICE_UNITS.toString(),
    expected_token: stack.devnet.token,
    metadata: { paymentPayload: { x402Version: 1, scheme: 'exact', network: 'layer2-sepolia', payload: { authorization: authorizationToJson(authorization), signature } } },
  });
  expect(verified.body.status).toBe('verified');
  const created = await stack.http.post('/v1/settle').send({ verification_id: verified.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  const id = created.body.settlement_id as string;
  for (let i = 0; i < 300; i++) {
    const row = await stack.db.prisma.settlement.findUnique({ where: { id } });
    if (row && (row.state === 'settled' || row.state === 'failed' || row.attentionAt)) return row;
    await sleep(50);
  }
  throw new Error(`settlement ${id} never ended`);
}

/** Transactions our keys sent (treasury and relayers) and the ETH they hold. */
async function spent() {
  const { treasury, relayers } = stack.devnet.accounts;
  const addresses = [treasury, ...relayers].map((a) => a.address);
  const [counts, balances] = await Promise.all([
    Promise.all(addresses.map((a) => stack.devnet.provider.getTransactionCount(a, 'latest'))),
    Promise.all(addresses.map((a) => stack.devnet.provider.getBalance(a))),
  ]);
  return { transactions: counts.reduce((a, b) => a + b, 0), wei: balances.reduce((a, b) => a + b, 0n) };
}

const reasonOf = (row: { errorDetails: unknown }) => (row.errorDetails as { reason?: string } | null)?.reason;
const deployed = async (address: string) => (await stack.devnet.provider.getCode(address)) !== '0x';

it('a counterfactual Safe that accepts only at gasprice 0 is never deployed; its failed probes are its own budget, not the factory', async () => {
  const report = abuseReport(
    'hostile-wallet-probe',
    "ERC-6492 wallet whose fallback handler accepts only in a fee-less simulation",
    'a counterfactual Safe (canonical factory and singleton, both allow-listed) set up with a fallback handler whose isValidSignature says yes only at tx.gasprice 0, paying the merchant three times; then an honest first-time Safe payer of the same factory (WALLET_DEPLOYS_PER_FACTORY=1)',
  );
  const hostile = await counterfactualSafe(hostileHandler);
  const before = await spent();
  const hostileRows = [];
  for (let i = 0; i < 3; i++) hostileRows.push(await pay(hostile));
  const afterHostile = await spent();
  const probes = await stack.db.pool.query<{ probe_failed: boolean }>('SELECT probe_failed FROM wallet_deployments WHERE wallet = $1', [hostile.address]);

  const honest = await counterfactualSafe(CANONICAL_SAFE.fallbackHandler);
  const honestRow = await pay(honest);

  const checks = [
    report.check('hostile wallet: settlements failed, nothing charged', 'failed,failed,failed', hostileRows.map((r) => r.state).join(',')),
    report.check('hostile wallet: first two refused by the probe at a real gas price', 'FiatTokenV2: invalid signature', reasonOf(hostileRows[1]) === reasonOf(hostileRows[0]) ? reasonOf(hostileRows[0]) : `${reasonOf(hostileRows[0])} / ${reasonOf(hostileRows[1])}`),
    report.check('hostile wallet: third refused without running its code', 'wallet deployment probes limit reached for this wallet', reasonOf(hostileRows[2])),
    report.check('hostile wallet: deployed', false, await deployed(hostile.address)),
    report.check('transactions sent by our keys for it', 0, afterHostile.transactions - before.transactions),
    report.check('gas our keys spent on it (wei)', '0', (before.wei - afterHostile.wei).toString()),
    report.check('failed probes counted against the wallet', 2, probes.rows.filter((r) => r.probe_failed).length),
    report.check("deployments counted against the factory's budget", 0, probes.rows.filter((r) => !r.probe_failed).length),
    report.check('honest first-time payer of the same factory afterwards', 'settled', honestRow.state),
    report.check('honest wallet deployed', true, await deployed(honest.address)),
  ];
  report.save();
  expect(hostileRows.map((r) => r.state)).toEqual(['failed', 'failed', 'failed']);
  expect(reasonOf(hostileRows[0])).toBe('FiatTokenV2: invalid signature');
  expect(reasonOf(hostileRows[2])).toBe('wallet deployment probes limit reached for this wallet');
  expect(afterHostile.transactions - before.transactions).toBe(0);
  expect(honestRow.state).toBe('settled');
  expect(checks.every(Boolean)).toBe(true);
}, 120_000);
