// `@facilitator/db/testing`: rows for tests. Never imported by production code (scripts/check-packages.ts).
export { settlementRow, settlementWithVerification, verificationRow } from './factories';
export { insertSettlementWithVerification, insertVerificationRow } from './store-rows';
export { allSettlementReaders, type AllSettlementReaders } from './all-settlement-readers';
