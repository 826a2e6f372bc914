// The in-memory settlement store the unit tests run on, held to the contract SettlementStore keeps
// on Postgres (settlement-store.contract.int.test.ts).
import { FakeSettlementStore } from './fakes';
import { settlementStoreContract } from './settlement-store-contract';

settlementStoreContract('FakeSettlementStore', async () => {
  const store = new FakeSettlementStore();
  return {
    store,
    seed: async (row) => store.add(row),
    history: async (id) => store.transitions.filter((t) => t.id === id).map((t) => ({ from: t.from, to: t.to, note: t.note ?? null })),
  };
});
