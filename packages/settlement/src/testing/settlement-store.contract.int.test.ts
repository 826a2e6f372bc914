// SettlementStore on a real, migrated Postgres, held to the settlement store's contract (the same
// expectations FakeSettlementStore is held to in fake-settlement-store.test.ts).
import { SettlementStore } from '@facilitator/db';
import { insertSettlementWithVerification } from '@facilitator/db/testing';
import { createTestDatabase } from '../../../../test/support/database';
import { settlementStoreContract } from './settlement-store-contract';

settlementStoreContract('SettlementStore', async () => {
  const db = await createTestDatabase();
  return {
    store: new SettlementStore(db.prisma, db.pool),
    seed: (row) => insertSettlementWithVerification(db.pool, row),
    history: async (id) => {
      const rows = await db.prisma.settlementTransition.findMany({ where: { settlementId: id }, orderBy: { id: 'asc' } });
      return rows.map((r) => ({ from: r.fromState, to: r.toState, note: r.note }));
    },
    close: () => db.drop(),
  };
});
