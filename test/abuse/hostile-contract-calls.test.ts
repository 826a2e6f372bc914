// Issue 22, "hostile code stays contained": a payer wallet's code run by verification (its ERC-1271 check, an
// ERC-6492 deployment) has a gas limit and goes alone on the wire, so neither a wallet that burns gas, nor
// an RPC answer held back for just that call, nor a check that reverts can mark healthy endpoints down, fail
// the verifications around it, or answer 503: that payment alone is refused as invalid.
import { randomBytes } from 'node:crypto';
import { getCreate2Address, hexlify, Interface, keccak256 } from 'ethers';
import supertest from 'supertest';
import { wrapErc6492Signature } from '@facilitator/evm-chain';
import { loadApiConfig } from '@facilitator/config';
import type { TransferAuthorization } from '@facilitator/core';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi, type ApiRuntime } from '../../apps/api/src/build-api';
import { startJsonRpcProxy, type JsonRpcProxy, type JsonRpcRequest } from '../support/json-rpc-proxy';
import { compileTestContract, deploy } from '../support/solidity';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { x402V2Request } from '../support/x402-request';
import { authorizationFrom, formBVerifyRequest } from '../support/contract-payer-requests';

const RPC_TIMEOUT_MS = 1_000;
const SLOW_ANSWER_MS = 4_000;
const HONEST = 20;
const ISVALIDSIGNATURE = '0x1626ba7e';

let stack: TestStack;
let proxies: JsonRpcProxy[];
let api: ApiRuntime;
let http: ReturnType<typeof supertest>;
let burner: string;
let slowWallet: string;
let bombFactory: string;
let bombWalletCode: string;

beforeAll(async () => {
  stack = await startTestStack();
  const { provider, accounts } = stack.devnet;
  const burning = compileTestContract('GasBurningWallet.sol', 'GasBurningWallet');
  // ten million rounds: about a billion gas, far past any block, if a node let it run
  burner = (await (await deploy(provider, accounts.deployer.privateKey, burning, [10_000_000])).getAddress()).toLowerCase();
  // accepts at once; only its RPC answer is held back (by the proxies)
  slowWallet = (await (await deploy(provider, accounts.deployer.privateKey, burning, [1])).getAddress()).toLowerCase();
  bombFactory = (await (await deploy(provider, accounts.deployer.privateKey, compileTestContract('HostileWallets.sol', 'ReturnBombFactory'))).getAddress()).toLowerCase();
  bombWalletCode = compileTestContract('HostileWallets.sol', 'ReturnBombWallet').bytecode;
  // two healthy endpoints, both fronts of the devnet, which hold back any request calling slowWallet
  proxies = await Promise.all([startJsonRpcProxy(stack.devnet.rpcUrl), startJsonRpcProxy(stack.devnet.rpcUrl)]);
  const callsSlowWallet = (call: JsonRpcRequest) => call.method === 'eth_call' && String((call.params?.[0] as { to?: string })?.to).toLowerCase() === slowWallet;
  for (const proxy of proxies) proxy.slow = { match: callsSlowWallet, delayMs: SLOW_ANSWER_MS };
  api = buildApi(
    loadApiConfig({
      ...stack.env,
      RPC_URL_84532: proxies.map((p) => p.url).join(','),
      RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS),
      WALLET_FACTORIES_84532: bombFactory,
    }),
    createSilentLogger(),
  );
  http = supertest(api.app);
}, 60_000);
afterAll(async () => {
  await api?.close();
  await Promise.all((proxies ?? []).map((p) => p.close()));
  await stack?.stop();
});

function x402Body(authorization: TransferAuthorization, signature: string) {
  const terms = { payTo: stack.devnet.accounts.merchant.address, amount: PRICE_UNITS, asset: stack.devnet.token, maxTimeoutSeconds: 300, resource: 'http://merchant.test/r' };
  return x402V2Request(authorization, signature, terms);
}

/** An ERC-6492 payer whose (allowlisted) factory deploys a wallet that answers more than the check can copy. */
function returnBombPayment(): { authorization: TransferAuthorization; signature: string } {
  const salt = hexlify(randomBytes(32));
  const wallet = getCreate2Address(bombFactory, salt, keccak256(bombWalletCode)).toLowerCase();
  const deployCall = new Interface(['function deploy(bytes32 salt) returns (address)']).encodeFunctionData('deploy', [salt]);
  return { authorization: authorizationFrom(stack.devnet, wallet), signature: wrapErc6492Signature(bombFactory, deployCall, '0x' + 'ab'.repeat(65)) };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: Math.round(performance.now() - started) };
}

/** The API's view of its endpoints, from /metrics: how many are down, and how many calls failed. */
async function endpointHealth(): Promise<{ down: number; failedCalls: number }> {
  const text = (await http.get('/metrics')).text;
  const up = [...text.matchAll(/^x402_rpc_endpoint_up\{chain="eip155:84532",endpoint="\d"[^}]*\} (\d)/gm)].map((m) => Number(m[1]));
  const failed = [...text.matchAll(/^x402_rpc_endpoint_calls_total\{chain="eip155:84532",endpoint="\d",outcome="failed"[^}]*\} (\d+)/gm)].map((m) => Number(m[1]));
  expect(up).toHaveLength(2);
  return { down: up.filter((u) => u === 0).length, failedCalls: failed.reduce((a, b) => a + b, 0) };
}

it('a wallet whose isValidSignature burns gas, and one whose answer is held back, next to 20 honest verifications', async () => {
  const report = abuseReport(
    'hostile-isvalidsignature',
    'Hostile ERC-1271 checks during verification',
    'two contract-wallet payers verify at the same instant as 20 honest ones: one whose isValidSignature loops (~1e9 gas), one whose eth_call answer the RPC endpoints hold back 4 s (RPC_TIMEOUT_MS 1 s); two endpoints',
  );
  const honest = await Promise.all(Array.from({ length: HONEST }, () => stack.payment()));
  const burnerPayment = authorizationFrom(stack.devnet, burner);
  const slowPayment = authorizationFrom(stack.devnet, slowWallet);
  const requestsBefore = proxies.map((p) => p.requests.length);
  const [burning, slow, ...others] = await Promise.all([
    timed(() => http.post('/v1/verify').send(formBVerifyRequest(stack.devnet, burnerPayment, '0x' + 'ab'.repeat(65)))),
    timed(() => http.post('/v1/verify').send(formBVerifyRequest(stack.devnet, slowPayment, '0x' + 'cd'.repeat(65)))),
    ...honest.map((p) => timed(() => http.post('/v1/verify').send(p.formB()))),
  ]);
  const health = await endpointHealth();
  const okOthers = others.filter((o) => o.value.status === 200 && o.value.body.status === 'verified').length;
  const slowestOther = Math.max(...others.map((o) => o.ms));
  // every request that asked a wallet (isValidSignature) went alone on the wire
  const strangerRequests = proxies.flatMap((p, i) => p.requests.slice(requestsBefore[i])).filter((calls) => JSON.stringify(calls).includes(ISVALIDSIGNATURE.slice(2)));
  const batchedStrangerRequests = strangerRequests.filter((calls) => calls.length > 1).length;

  const rows = [
    report.check('RPC endpoints marked down', 0, health.down),
    report.check('RPC calls counted as failed', 0, health.failedCalls),
    report.check('honest verifications verified', `${HONEST}/${HONEST}`, `${okOthers}/${HONEST}`),
    report.assert('slowest honest verification', `under ${RPC_TIMEOUT_MS} ms`, `${slowestOther} ms`, slowestOther < RPC_TIMEOUT_MS),
    report.check('gas burner: answer', '400 verification_failed', `${burning.value.status} ${burning.value.body.error?.code}`),
    report.assert('gas burner: answered within', `${RPC_TIMEOUT_MS} ms`, `${burning.ms} ms`, burning.ms < RPC_TIMEOUT_MS),
    report.check('held-back wallet: answer', '400 verification_failed', `${slow.value.status} ${slow.value.body.error?.code}`),
    report.assert('held-back wallet: answered after its timeout, not its 4 s', `under ${SLOW_ANSWER_MS} ms`, `${slow.ms} ms`, slow.ms < SLOW_ANSWER_MS),
    report.assert('wallet calls sent inside a JSON-RPC batch', '0', `${batchedStrangerRequests} of ${strangerRequests.length}`, strangerRequests.length >= 2 && batchedStrangerRequests === 0),
  ];
  report.note(`gas burner refused as: ${burning.value.body.error?.details?.reason}`);
  report.note(`held-back wallet refused as: ${slow.value.body.error?.details?.reason}`);
  report.save();
  expect(health).toEqual({ down: 0, failedCalls: 0 });
  expect(okOthers).toBe(HONEST);
  expect(slowestOther).toBeLessThan(RPC_TIMEOUT_MS);
  expect(burning.value.status).toBe(400);
  expect(burning.value.body.error).toMatchObject({ code: 'verification_failed', details: { reason: expect.stringContaining('gas') } });
  expect(burning.ms).toBeLessThan(RPC_TIMEOUT_MS);
  expect(slow.value.status).toBe(400);
  expect(slow.value.body.error).toMatchObject({ code: 'verification_failed', details: { reason: expect.stringContaining('did not answer in') } });
  expect(slow.ms).toBeLessThan(SLOW_ANSWER_MS);
  expect(strangerRequests.length).toBeGreaterThanOrEqual(2);
  expect(batchedStrangerRequests).toBe(0);
  expect(rows.every(Boolean)).toBe(true);
});

it('an ERC-6492 check that reverts is an invalid signature (400 on /v1, isValid false on /x402), never 503', async () => {
  const report = abuseReport(
    'erc6492-check-reverts',
    'An ERC-6492 check that reverts',
    "an allowlisted factory deploys (in the simulation) a wallet whose ERC-1271 answer is too large for the check contract to copy within its gas limit: the check's eth_call fails",
  );
  const v1 = returnBombPayment();
  const x402 = returnBombPayment();
  const [onV1, onX402] = await Promise.all([http.post('/v1/verify').send(formBVerifyRequest(stack.devnet, v1.authorization, v1.signature)), http.post('/x402/verify').send(x402Body(x402.authorization, x402.signature))]);
  const health = await endpointHealth();
  const rows = [
    report.check('/v1/verify', '400 verification_failed', `${onV1.status} ${onV1.body.error?.code}`),
    report.check('/x402/verify', '200 isValid false invalid_exact_evm_payload_signature', `${onX402.status} isValid ${onX402.body.isValid} ${onX402.body.invalidReason}`),
    report.check('RPC endpoints marked down', 0, health.down),
  ];
  report.note(`refused as: ${onV1.body.error?.details?.reason}`);
  report.save();
  expect(onV1.status).toBe(400);
  expect(onV1.body.error).toMatchObject({ code: 'verification_failed', details: { reason: expect.stringContaining('ERC-6492 check') } });
  expect(onX402.status).toBe(200);
  expect(onX402.body).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_payload_signature' });
  expect(health.down).toBe(0);
  expect(rows.every(Boolean)).toBe(true);
});
