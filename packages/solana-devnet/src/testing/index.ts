// `@facilitator/solana-devnet/testing`: what tests build on the local Solana chain. Never imported by production code.
export { stockSvmPayment, stockSvmRequirements, type StockSvmPayment, type StockSvmPaymentOptions, type StockSvmRequirements } from './stock-x402-payment';
