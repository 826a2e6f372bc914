// `@facilitator/evm-sending/testing`: request builders and settlement rows for the transaction providers' tests. Never imported
// by production code (scripts/check-packages.ts).
export { feeLegRequest, transferLegRequest, transferLegRequestFor } from './devnet-requests';
export { insertDevnetSettlement } from './settlement-rows';
