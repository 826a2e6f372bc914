// The settlements table's owner, split by reader (docs/architecture.md, "Tables and their owners"): each class
// reads and writes what one kind of caller needs, on the shared SettlementTable.
export { SettlementTable, type SettlementRow } from './settlement-table';
export { SettlementStore } from './settlement-store';
export { SettlementRequestStore, type NewSettlementRow } from './settlement-request-store';
export { SettlementLookups, LOOKUP_LIMIT } from './settlement-lookups';
export { SettlementAccountingStore, type FeeReverts } from './settlement-accounting-store';
export { SettlementFinalityStore, type ForeignExecutionWatch } from './settlement-finality-store';
export { SettlementPages } from './settlement-pages';
export { SettlementRetention } from './settlement-retention';
export type { TransitionRequest, TransitionHop } from './transition-statement';
export type { FeeReservationRequest, PayerInFlight } from './fee-reservation-statement';
export { NONCE_CONSUMING_STATES, type ForeignExecutionBlock, type SettlementUpdate, type SettlementWithVerificationRow } from '../settlement-row';
