// The TransactionProvider contract, run against both implementations on the same scenarios (anvil with the
// real USDC, real Postgres): the local keys, and OpenZeppelin Relayer (the local server speaking its API).
// What the settlement engine relies on must hold the same way whoever signs.
import { parseUnits, type JsonRpcProvider } from 'ethers';
import { IdPrefix, newId } from '@facilitator/core';
import { createProvider, paidBetween } from '@facilitator/evm-chain';
import {
  IdempotencyConflictError,
  LocalKeyTransactionProvider,
  TransactionWouldRevertError,
  type TransactionProvider,
  type TransactionRequest,
} from '@facilitator/evm-sending';
import { transferLegRequest } from '@facilitator/evm-sending/testing';
import { startDevnet, type Devnet, type DevnetAccount } from '@facilitator/evm-devnet';
import { startOpenZeppelinRelayerServer, type LocalRelayerServer } from '@facilitator/relayer-openzeppelin/testing';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { OpenZeppelinRelayerClient } from './api/relayer-api-client';
import { OpenZeppelinRelayerProvider } from './openzeppelin-relayer-provider';

const usdc = (amount: string) => parseUnits(amount, 6);
const API_KEY = 'contract-test-api-key-0123456789abcdef';

let devnet: Devnet;
let db: TestDatabase;
let rpc: JsonRpcProvider;
let relayer: LocalRelayerServer;

beforeAll(async () => {
  [devnet, db] = await Promise.all([startDevnet({ relayerCount: 2 }), createTestDatabase()]);
  rpc = createProvider(devnet.rpcUrl, devnet.chainId);
  // each implementation sends from its own key, so their nonces never meet
  relayer = await startOpenZeppelinRelayerServer({ rpcUrl: devnet.rpcUrl, apiKey: API_KEY, privateKey: devnet.accounts.relayers[0].privateKey });
});

afterAll(async () => {
  await relayer?.stop();
  rpc?.destroy();
  await devnet?.stop();
  await db?.drop();
});

interface Implementation {
  sender: () => DevnetAccount;
  create: () => TransactionProvider;
}

const implementations: Array<[string, Implementation]> = [
  [
    'LocalKeyTransactionProvider',
    {
      sender: () => devnet.accounts.relayers[1],
      create: () => new LocalKeyTransactionProvider(db.pool, new Map([[devnet.chainId, rpc]]), [devnet.accounts.relayers[1]], { receiptPollIntervalMs: 20 }),
    },
  ],
  [
    'OpenZeppelinRelayerProvider',
    {
      sender: () => devnet.accounts.relayers[0],
      create: () =>
        new OpenZeppelinRelayerProvider(
          db.pool,
          new OpenZeppelinRelayerClient({ baseUrl: relayer.url, apiKey: API_KEY }),
          [{ id: relayer.relayerId, chainId: devnet.chainId, address: relayer.address }],
          new Map([[devnet.chainId, rpc]]),
          { statusPollIntervalMs: 50, receiptPollIntervalMs: 20 },
        ),
    },
  ],
];

const transferRequest = (sender: DevnetAccount, value: bigint): Promise<TransactionRequest> => transferLegRequest(devnet, newId(IdPrefix.Settlement), value, sender);

describe.each(implementations)('TransactionProvider contract: %s', (_name, implementation) => {
  it('has nothing for a new key, sends once, and finds it from any instance', async () => {
    const request = await transferRequest(implementation.sender(), usdc('0.5'));
    const [provider, other] = [implementation.create(), implementation.create()];
    expect(await provider.find(request.settlementId, 'transfer')).toBeNull();
    expect(await provider.hasAny(request.settlementId, 'transfer')).toBe(false);
    const before = await devnet.balanceOf(devnet.accounts.merchant.address);

    const sent = await provider.submit(request);
    expect(sent).toMatchObject({ from: implementation.sender().address.toLowerCase(), hashes: [sent.hash] });
    expect(await other.submit(request)).toMatchObject({ id: sent.id, hash: sent.hash, nonce: sent.nonce });
    expect(await other.find(request.settlementId, 'transfer')).toMatchObject({ id: sent.id, hash: sent.hash });
    expect(await other.hasAny(request.settlementId, 'transfer')).toBe(true);

    const outcome = await other.waitForOutcome(sent.id, 1);
    expect(outcome).toMatchObject({ status: 'confirmed', hash: sent.hash });
    if (outcome.status !== 'confirmed') throw new Error('not confirmed');
    expect(paidBetween(outcome.logs, devnet.token, devnet.accounts.payer.address, devnet.accounts.merchant.address)).toBe(usdc('0.5'));
    expect(await devnet.balanceOf(devnet.accounts.merchant.address)).toBe(before + usdc('0.5'));
    expect((await rpc.getTransaction(sent.hash))!.from.toLowerCase()).toBe(implementation.sender().address.toLowerCase());
  });

  it('refuses different calldata for a stored key', async () => {
    const request = await transferRequest(implementation.sender(), 1n);
    const provider = implementation.create();
    await provider.submit(request);
    const other = await transferRequest(implementation.sender(), 2n);
    await expect(provider.submit({ ...request, data: other.data })).rejects.toBeInstanceOf(IdempotencyConflictError);
  });

  it('refuses what would revert, with its reason, storing nothing', async () => {
    const request = await transferRequest(implementation.sender(), usdc('1000000'));
    const provider = implementation.create();
    const error = await provider.submit(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionWouldRevertError);
    expect(error).toMatchObject({ reason: 'ERC20: transfer amount exceeds balance' });
    expect(await provider.hasAny(request.settlementId, 'transfer')).toBe(false);
  });

  it("reads the network's fee against its cap", async () => {
    expect(await implementation.create().networkFee(devnet.chainId)).toMatchObject({ maxFeePerGasCap: parseUnits('100', 'gwei'), aboveCap: false });
  });
});
