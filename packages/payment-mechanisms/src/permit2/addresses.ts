/**
 * Where Permit2 and x402's Permit2 proxies live: the same address on every chain (CREATE2), the addresses
 * x402 clients sign for (lowercase; `@x402/evm` 2.27 names the same).
 */
export const PERMIT2_ADDRESS = '0x000000000022d473030f116ddee9f6b43ac78ba3';
export const X402_EXACT_PERMIT2_PROXY = '0x402085c248eea27d92e8b30b2c58ed07f9e20001';
export const X402_UPTO_PERMIT2_PROXY = '0x4020a4f3b7b90cca423b9fabcc0ce57c6c240002';
