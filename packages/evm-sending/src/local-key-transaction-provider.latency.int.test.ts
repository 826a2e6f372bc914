import { parseUnits, type JsonRpcProvider } from 'ethers';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { createProvider, fiatTokenInterface } from '@facilitator/evm-chain';
import { transferLegRequestFor } from './testing/devnet-requests';
import { LocalKeyTransactionProvider } from './local-key-transaction-provider';
import { RelayerRotation } from './relayer-rotation';
import { setTimeout as sleep } from 'node:timers/promises';
import { insertDevnetSettlement } from './testing';

// Its own file so that it runs beside the main provider tests: with 1 s blocks it takes seconds of wall time.

const PAIRS = 5;
const P50_BUDGET_MS = 2_500;

let devnet: Devnet;
let db: TestDatabase;
let rpc: JsonRpcProvider;

beforeAll(async () => {
  [devnet, db] = await Promise.all([startDevnet({ blockTime: 1, relayerCount: 2 }), createTestDatabase()]);
  rpc = createProvider(devnet.rpcUrl, devnet.chainId);
});

afterAll(async () => {
  rpc?.destroy();
  await devnet?.stop();
  await db?.drop();
});

const newSettlement = () => insertDevnetSettlement(db.pool, devnet, { amount: '10000' });

describe('LocalKeyTransactionProvider latency', () => {
  it(`lands fee + transfer within ${P50_BUDGET_MS} ms at the median with 1 s blocks and default options`, async () => {
    const { treasury, relayers, merchant, payer } = devnet.accounts;
    const provider = new LocalKeyTransactionProvider(db.pool, { [devnet.chainId]: rpc }, [treasury, ...relayers]);
    const rotation = new RelayerRotation(relayers.map((r) => r.address));

    const settle = async (delayMs: number): Promise<number> => {
      await sleep(delayMs);
      const settlementId = await newSettlement();
      const { authorization: a, signature } = await devnet.signTransferAuthorization(payer.privateKey, { to: merchant.address, value: 10_000n });
      const started = performance.now();
      const fee = await provider.submit({
        settlementId, purpose: 'fee', chainId: devnet.chainId, from: treasury.address, to: devnet.token,
        data: fiatTokenInterface.encodeFunctionData('transferFrom', [merchant.address, treasury.address, 1_000n]),
      });
      expect((await provider.waitForOutcome(fee.id, 1)).status).toBe('confirmed');
      const transfer = await provider.submit({
        settlementId, purpose: 'transfer', chainId: devnet.chainId, from: rotation.next(), to: devnet.token,
        data: transferLegRequestFor(devnet, settlementId, a, signature).data,
      });
      expect((await provider.waitForOutcome(transfer.id, 1)).status).toBe('confirmed');
      return performance.now() - started;
    };

    // staggered over one block interval, so the pairs start at different points of the block cycle
    const durations = (await Promise.all(Array.from({ length: PAIRS }, (_, i) => settle((i * 1_000) / PAIRS)))).sort((x, y) => x - y);
    const median = durations[Math.floor(PAIRS / 2)];
    expect(median).toBeLessThanOrEqual(P50_BUDGET_MS);
    expect(await devnet.balanceOf(merchant.address)).toBe(parseUnits('1000', 6) - BigInt(PAIRS) * 1_000n + BigInt(PAIRS) * 10_000n);
  });
});
