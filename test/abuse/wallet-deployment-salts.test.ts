// Attack (issue 22, 5): fresh-salt ERC-6492 payers make our relayers deploy wallets for free. Each deployment
// costs 250-300k gas, paid by us before anything of the payment is checked, and Safe's factory deploys any
// singleton. Now a wallet is deployed only when the factory's implementation is allow-listed, the
// counterfactual wallet holds the payment, the merchant's allowance covers the fee, deploy-then-transfer
// passes in one simulation, and the merchant and factory are within WALLET_DEPLOYS_PER_MERCHANT/_PER_FACTORY.
import { randomBytes } from 'node:crypto';
import { getAddress, hexlify, Interface, Wallet, ZeroAddress } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { wrapErc6492Signature } from '@facilitator/evm-chain';
import { authorizationToJson, type TransferAuthorization } from '@facilitator/core';
import { authorizationDigest, CANONICAL_SAFE, placeCanonicalSafe, safeOwnerSignature } from '../support/canonical-safe';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';

const LIMIT = 3;
let stack: TestStack;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const artifact = (p: string) => require(`@safe-global/safe-contracts/build/artifacts/contracts/${p}`) as { abi: unknown[]; deployedBytecode: string };
const safeInterface = new Interface(artifact('Safe.sol/Safe.json').abi as never);
const factoryInterface = new Interface(artifact('proxies/SafeProxyFactory.sol/SafeProxyFactory.json').abi as never);

beforeAll(async () => {
  // the atomic path, as deployed: a contract-wallet payer is settled only there (SEQUENTIAL_CONTRACT_PAYERS=refuse)
  stack = await startTestStack({ executor: true });
  await placeCanonicalSafe(stack.devnet.provider);
  await stack.startWorker({ WALLET_DEPLOYS_PER_MERCHANT: String(LIMIT) });
});
afterAll(async () => {
  await stack?.stop();
});

interface Counterfactual {
  address: string;
  signature: string;
  authorization: TransferAuthorization;
}

/** A one-owner Safe of a fresh salt, not deployed, pointing at `singleton`, and its ERC-6492 payment to the merchant. */
async function counterfactualPayment(singleton: string, funded: boolean): Promise<Counterfactual> {
  const owner = Wallet.createRandom();
  const initializer = safeInterface.encodeFunctionData('setup', [[owner.address], 1, ZeroAddress, '0x', CANONICAL_SAFE.fallbackHandler, ZeroAddress, 0, ZeroAddress]);
  const factoryCalldata = factoryInterface.encodeFunctionData('createProxyWithNonce', [singleton, initializer, BigInt(hexlify(randomBytes(8)))]);
  const [predicted] = factoryInterface.decodeFunctionResult('createProxyWithNonce', await stack.devnet.provider.call({ to: CANONICAL_SAFE.factory, data: factoryCalldata }));
  const address = (predicted as string).toLowerCase();
  if (funded) await stack.devnet.mint(address, PRICE_UNITS);
  const authorization: TransferAuthorization = {
    from: address,
    to: stack.devnet.accounts.merchant.address,
    value: PRICE_UNITS,
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
    nonce: hexlify(randomBytes(32)),
  };
  const inner = await safeOwnerSignature(new Wallet(owner.privateKey), stack.devnet.chainId, address, authorizationDigest(stack.devnet.eip712Domain, authorization));
  return { address, authorization, signature: wrapErc6492Signature(CANONICAL_SAFE.factory, factoryCalldata, inner) };
}

function formB(p: Counterfactual) {
  return {
    transaction_hash: p.authorization.nonce,
    chain: 'layer2-sepolia',
    seller_address: stack.devnet.accounts.merchant.address,
    expected_amount: PRICE_UNITS.toString(),
    expected_token: stack.devnet.token,
    metadata: { paymentPayload: { x402Version: 1, scheme: 'exact', network: 'layer2-sepolia', payload: { authorization: authorizationToJson(p.authorization), signature: p.signature } } },
  };
}

/** Verifies and settles the payment; resolves to its final settlement row. */
async function settle(p: Counterfactual) {
  const verified = await stack.http.post('/v1/verify').send(formB(p));
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

/** Transactions our keys sent (treasury and relayers) and the wallet deployments among them. */
async function spent() {
  const { treasury, relayers } = stack.devnet.accounts;
  const counts = await Promise.all([treasury, ...relayers].map((a) => stack.devnet.provider.getTransactionCount(a.address, 'latest')));
  const deployments = await stack.db.prisma.chainTransaction.findMany({ where: { purpose: 'wallet_deploy' }, select: { attempts: true } });
  return { transactions: counts.reduce((a, b) => a + b, 0), deployments: deployments.length };
}

const reasonOf = (row: { errorDetails: unknown }) => (row.errorDetails as { reason?: string } | null)?.reason;
const deployed = async (address: string) => (await stack.devnet.provider.getCode(address)) !== '0x';

it('fresh-salt ERC-6492 deployments: a foreign singleton and an unfunded wallet deploy nothing; the limit stops the N+1th', async () => {
  const report = abuseReport(
    'wallet-deployment-salts',
    'Fresh-salt ERC-6492 wallet deployments at our expense',
    `counterfactual Safes of fresh salts: 3 pointing at a copy of the Safe singleton elsewhere (funded), 3 at the canonical singleton with no balance, then ${LIMIT + 2} funded ones for one merchant (WALLET_DEPLOYS_PER_MERCHANT=${LIMIT})`,
  );
  // a byte-for-byte copy of Safe 1.4.1 at another address: the factory deploys a proxy to it as readily
  const foreign = getAddress('0x' + randomBytes(20).toString('hex'));
  await stack.devnet.provider.send('anvil_setCode', [foreign, artifact('Safe.sol/Safe.json').deployedBytecode]);

  const start = await spent();
  const foreignRows = [];
  const foreignPayments = await Promise.all([0, 1, 2].map(() => counterfactualPayment(foreign, true)));
  for (const p of foreignPayments) foreignRows.push(await settle(p));
  const afterForeign = await spent();

  const unfundedRows = [];
  const unfundedPayments = await Promise.all([0, 1, 2].map(() => counterfactualPayment(CANONICAL_SAFE.singleton, false)));
  for (const p of unfundedPayments) unfundedRows.push(await settle(p));
  const afterUnfunded = await spent();

  const fundedRows = [];
  const fundedPayments = await Promise.all(Array.from({ length: LIMIT + 2 }, () => counterfactualPayment(CANONICAL_SAFE.singleton, true)));
  for (const p of fundedPayments) fundedRows.push(await settle(p));
  const afterLimit = await spent();
  const deployedWallets = (await Promise.all(fundedPayments.map((p) => deployed(p.address)))).filter(Boolean).length;
  const gasOfDeployments = await Promise.all(
    (await stack.db.prisma.chainTransaction.findMany({ where: { purpose: 'wallet_deploy' }, select: { attempts: true } })).map(async (t) => {
      const hashes = (t.attempts as Array<{ hash: string }>).map((a) => a.hash);
      for (const hash of hashes) {
        const receipt = await stack.devnet.provider.getTransactionReceipt(hash);
        if (receipt) return receipt.gasUsed;
      }
      return 0n;
    }),
  );

  const checks = [
    report.check('foreign singleton: deployments paid by our relayers', 0, afterForeign.deployments - start.deployments),
    report.check('foreign singleton: transactions sent by our keys', 0, afterForeign.transactions - start.transactions),
    report.check('foreign singleton: settlements failed, nothing charged', 'failed x3', foreignRows.map((r) => r.state).join(',') === 'failed,failed,failed' ? 'failed x3' : foreignRows.map((r) => r.state).join(',')),
    report.check('foreign singleton: reason', 'the wallet implementation the factory would deploy is not on the allowlist', reasonOf(foreignRows[0])),
    report.check('foreign singleton: wallets deployed', 0, (await Promise.all(foreignPayments.map((p) => deployed(p.address)))).filter(Boolean).length),
    report.check('unfunded counterfactual wallet: deployments paid by our relayers', 0, afterUnfunded.deployments - afterForeign.deployments),
    report.check('unfunded counterfactual wallet: transactions sent by our keys (gas spent: none)', 0, afterUnfunded.transactions - afterForeign.transactions),
    report.check('unfunded counterfactual wallet: reason', 'the counterfactual wallet does not hold the payment', reasonOf(unfundedRows[0])),
    report.check(`funded, one merchant: deployments paid by our relayers before the limit`, LIMIT, afterLimit.deployments - afterUnfunded.deployments),
    report.check('funded, one merchant: wallets deployed', LIMIT, deployedWallets),
    report.check('funded, one merchant: settled', LIMIT, fundedRows.filter((r) => r.state === 'settled').length),
    report.check('funded, one merchant: refused by the limit (nothing sent, nothing charged)', 2, fundedRows.filter((r) => reasonOf(r) === 'wallet deployments limit reached for this merchant').length),
    report.check('settlements parked for an operator', 0, [...foreignRows, ...unfundedRows, ...fundedRows].filter((r) => r.attentionAt).length),
  ];
  const signatureBytes = (fundedPayments[0].signature.length - 2) / 2;
  report.note(`gas of each deployment our relayers paid: ${gasOfDeployments.map(String).join(', ')}; an ERC-6492-wrapped one-owner Safe signature is ${signatureBytes} bytes (the cap is 4,096)`);
  report.save();
  expect(checks.every(Boolean)).toBe(true);
  expect(afterForeign.deployments - start.deployments).toBe(0);
  expect(afterUnfunded.transactions - afterForeign.transactions).toBe(0);
  expect(afterLimit.deployments - afterUnfunded.deployments).toBe(LIMIT);
  expect(signatureBytes).toBeLessThan(4096);
}, 120_000);
