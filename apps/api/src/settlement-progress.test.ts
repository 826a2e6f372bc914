import type { Settlement } from '@facilitator/db';
import { settlementProgressReader } from './settlement-progress';

const row = (fields: Partial<Settlement>) => ({ id: 'stl_1', state: 'pending', settlementTxHash: null, waitingReason: null, waitingDetail: null, ...fields }) as Settlement;

function reader(settlement: Settlement, hashes: Map<string, string> = new Map()) {
  const asked: string[][] = [];
  const read = settlementProgressReader({
    settlements: { findByIds: async () => [settlement] },
    transactions: {
      paymentTransactionHashes: async (ids) => {
        asked.push([...ids]);
        return hashes;
      },
    },
  });
  return { read: () => read([settlement.id]), asked };
}

describe('settlementProgressReader: the hash a pending answer may name', () => {
  it("names the transaction of someone else's that paid the merchant while the settlement waits for its confirmations", async () => {
    const r = reader(row({ waitingReason: 'execution_confirming', waitingDetail: { tx_hash: '0xtheirs', confirmations: 1, required: 3 } }));
    expect((await r.read())[0].transactionHash).toBe('0xtheirs');
    expect(r.asked).toEqual([[]]);
  });

  it('names nothing for a settlement waiting for any other reason before anything is sent', async () => {
    const r = reader(row({ waitingReason: 'gas_price_above_cap', waitingDetail: { tx_hash: '0xnot-a-payment' } }));
    expect((await r.read())[0].transactionHash).toBeNull();
  });

  it("names the payment's own transaction once it is signed", async () => {
    const r = reader(row({ state: 'executing' }), new Map([['stl_1', '0xtransfer']]));
    expect((await r.read())[0].transactionHash).toBe('0xtransfer');
    expect(r.asked).toEqual([['stl_1']]);
  });
});
