import type { Pool } from 'pg';
import type { PrismaClient } from '../generated/prisma/client';
import {
  SettlementAccountingStore,
  SettlementFinalityStore,
  SettlementLookups,
  SettlementPages,
  SettlementRequestStore,
  SettlementRetention,
  SettlementStore,
} from '../repositories/settlements';

/** Every reader of the settlements table at once: what a test that checks the table's behaviour whole uses. */
export type AllSettlementReaders = SettlementStore &
  SettlementRequestStore &
  SettlementLookups &
  SettlementAccountingStore &
  SettlementFinalityStore &
  SettlementPages &
  SettlementRetention;

/**
 * One object answering every reader's methods, each by the reader that owns it. Tests only: a process builds the
 * readers it uses (apps/api and apps/worker's composition roots), never all of them.
 */
export function allSettlementReaders(prisma: PrismaClient, pool: Pool): AllSettlementReaders {
  const readers: object[] = [
    new SettlementStore(prisma, pool),
    new SettlementRequestStore(prisma, pool),
    new SettlementLookups(prisma, pool),
    new SettlementAccountingStore(prisma, pool),
    new SettlementFinalityStore(prisma, pool),
    new SettlementPages(prisma, pool),
    new SettlementRetention(prisma, pool),
  ];
  return new Proxy({} as AllSettlementReaders, {
    get(_target, name) {
      for (const reader of readers) {
        const member = (reader as Record<string | symbol, unknown>)[name];
        if (typeof member === 'function') return member.bind(reader);
      }
      return undefined;
    },
  });
}
