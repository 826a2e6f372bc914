import { FundedRelayers, type RelayerFunds } from './funded-relayers';

const CHAIN_ID = 84532;
const [A, B, C] = ['0x' + 'a1'.repeat(20), '0x' + 'b2'.repeat(20), '0x' + 'c3'.repeat(20)];

describe('FundedRelayers', () => {
  it('takes the relayers in turn, and only those named when limited (a key rotation: the keys the executor names)', async () => {
    const relayers = new FundedRelayers([A, B]);
    expect([await relayers.next(CHAIN_ID), await relayers.next(CHAIN_ID)].sort()).toEqual([A, B].sort());
    const limited = await Promise.all([1, 2, 3].map(() => relayers.next(CHAIN_ID, [B])));
    expect(limited).toEqual([B, B, B]);
    // a limit naming none of this worker's keys gives none, as when every key is dry
    await expect(relayers.next(CHAIN_ID, ['0x000000000000000000000000000000000000dead'])).resolves.toBeUndefined();
  });

  it('is one rotation for every user: the sequential sends and the batches continue each other', async () => {
    const relayers = new FundedRelayers([A, B, C]);
    const sequential = () => relayers.next(CHAIN_ID);
    const batches = () => relayers.next(CHAIN_ID, [A, B, C]);
    // interleaved callers still walk A, B, C, A: neither restarts from the first key
    expect([await sequential(), await batches(), await sequential(), await batches()]).toEqual([A, B, C, A]);
  });

  it('skips a relayer under its minimum, reports each reading, and says when none is funded', async () => {
    const balances = new Map([[A, 0n], [B, 5n]]);
    const readings: string[] = [];
    const funds: RelayerFunds = {
      balanceOf: async (_chainId, relayer) => balances.get(relayer) ?? 0n,
      minimum: () => 1n,
      onReading: (_chainId, relayer, dry) => readings.push(`${relayer === A ? 'A' : 'B'}:${dry ? 'dry' : 'ok'}`),
    };
    const relayers = new FundedRelayers([A, B], funds);
    expect(await relayers.next(CHAIN_ID)).toBe(B);
    expect(await relayers.anyFunded(CHAIN_ID)).toBe(true);
    balances.set(B, 0n);
    expect(await relayers.next(CHAIN_ID)).toBeUndefined();
    expect(await relayers.anyFunded(CHAIN_ID)).toBe(false);
    // next: A dry, B ok; anyFunded: A dry, B ok; next: A dry, B dry; anyFunded: A dry, B dry
    expect(readings).toEqual(['A:dry', 'B:ok', 'A:dry', 'B:ok', 'A:dry', 'B:dry', 'A:dry', 'B:dry']);
  });

  it('needs at least one relayer', () => {
    expect(() => new FundedRelayers([])).toThrow(/at least one relayer/);
  });
});
