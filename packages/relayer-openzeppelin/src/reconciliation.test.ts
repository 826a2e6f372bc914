import type { EvmTransactionResponse } from './api/relayer-api-types';
import { jsonWithIntegers } from './api/relayer-api-client';
import type { ExternalTransactionStatements } from '@facilitator/db';
import type { OpenZeppelinRelayerClient } from './api/relayer-api-client';
import { resolveRelayerProviderOptions } from './provider-options';
import { couldBeOurs, createdAtMs, RelayerReconciler } from './reconciliation';

const binding = { id: 'relayer-1', chainId: 84532, address: '0x00000000000000000000000000000000000000aa' };
const row = { toAddress: '0x00000000000000000000000000000000000000bb', data: '0x23b872dd0001' };
const created = Date.parse('2026-11-25T09:00:00.000Z');

function candidate(overrides: Partial<EvmTransactionResponse> = {}): EvmTransactionResponse {
  return {
    id: 'c1',
    status: 'submitted',
    created_at: '2026-11-25T09:00:01.123456789+00:00',
    value: '0',
    from: binding.address,
    to: '0x00000000000000000000000000000000000000BB',
    relayer_id: 'relayer-1',
    data: '0x23B872DD0001',
    ...overrides,
  };
}

describe('couldBeOurs', () => {
  it('matches the relayer, target and calldata whatever their case, with no value, created after the row', () => {
    expect(couldBeOurs(candidate(), row, binding, created)).toBe(true);
    expect(couldBeOurs(candidate({ data: '23b872dd0001' }), row, binding, created)).toBe(true);
  });

  it.each([
    ['another relayer', { relayer_id: 'relayer-2' }],
    ['another target', { to: '0x00000000000000000000000000000000000000cc' }],
    ['no target', { to: null }],
    ['other calldata', { data: '0x23b872dd0002' }],
    ['a value', { value: '1' }],
    ['an unreadable value', { value: 'lots' }],
    ['an earlier creation', { created_at: '2026-11-25T08:59:59.999+00:00' }],
    ['an unreadable creation time', { created_at: 'yesterday' }],
  ])('does not match %s', (_what, overrides) => {
    expect(couldBeOurs(candidate(overrides as Partial<EvmTransactionResponse>), row, binding, created)).toBe(false);
  });
});

describe('createdAtMs', () => {
  it("reads the relayer's RFC 3339 times with nanoseconds and offsets", () => {
    expect(createdAtMs({ created_at: '2026-11-25T09:00:01.123456789+00:00' })).toBe(created + 1_123);
    expect(createdAtMs({ created_at: '2026-11-25T10:00:01.5+01:00' })).toBe(created + 1_500);
    expect(createdAtMs({ created_at: '2026-11-25T09:00:01Z' })).toBe(created + 1_000);
  });
});

describe('jsonWithIntegers', () => {
  it('writes bigints as exact JSON integers (wei past 2^53) and leaves strings alone', () => {
    const json = jsonWithIntegers({ value: 0n, max_fee_per_gas: 2n ** 64n + 1n, data: '0x01', note: 'bigint:5' });
    expect(json).toBe('{"value":0,"max_fee_per_gas":18446744073709551617,"data":"0x01","note":"bigint:5"}');
  });
});

describe('RelayerReconciler reading the relayer list', () => {
  const rowCreated = new Date(created);
  const ours = candidate({ id: 'ours', created_at: '2026-11-25T09:00:02+00:00' });
  const stranger = (id: string, at: string) => candidate({ id, created_at: at, data: '0x99' });

  async function claimFrom(pages: EvmTransactionResponse[][]): Promise<string | null> {
    const client = {
      listTransactions: async (_id: string, page: number) => ({ items: pages[page - 1] ?? [], totalItems: pages.flat().length }),
    } as unknown as OpenZeppelinRelayerClient;
    const reconciler = new RelayerReconciler(client, resolveRelayerProviderOptions({ reconcilePageSize: 2 }, 10_000));
    const locked = { claimedAmong: async () => new Set<string>(), recordAccepted: async () => 'stored' } as unknown as ExternalTransactionStatements;
    const claimed = await reconciler.claim(locked, { ...row, id: 'ctx_1', settlementId: 'stl_1', purpose: 'fee', createdAt: rowCreated } as never, binding);
    return claimed?.id ?? null;
  }

  it('stops at the first page older than the row when the list is newest first', async () => {
    const pages = [[stranger('a', '2026-11-25T09:00:05+00:00'), stranger('b', '2026-11-25T08:00:00+00:00')], [ours]];
    // ours after an older one cannot be in a newest-first list: it is not read (and not claimed)
    expect(await claimFrom(pages)).toBeNull();
  });

  it('reads every page of a list in no order (older relayers, in-memory storage): the lost transaction is found, none sent twice', async () => {
    const pages = [
      [stranger('a', '2026-11-25T08:00:00+00:00'), stranger('b', '2026-11-25T09:00:05+00:00')],
      [stranger('c', '2026-11-25T07:00:00+00:00'), stranger('d', '2026-11-25T06:00:00+00:00')],
      [ours],
    ];
    expect(await claimFrom(pages)).toBe('ours');
  });
});
