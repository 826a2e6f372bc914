// Rows for tests, complete and typed: every column of the Prisma model is written here once, so a test
// names only the values it is about (as overrides) and a new column is added in this one place.
import { evmNetworkId } from '@facilitator/core';
import type { Settlement, Verification } from '../generated/prisma/client';

const CHAIN_ID = 84532;
/** USDC on Base Sepolia */
const TOKEN = '0x036cbd53842c5426634e7929541ec2318f3dcf7e';
const PAYER = '0x1111111111111111111111111111111111111111';
const MERCHANT = '0x2222222222222222222222222222222222222222';
const NONCE = '0x' + 'ab'.repeat(32);
const CREATED_AT = '2024-05-01T10:00:00.000Z';
/** The payment above as the EIP-3009 mechanism stores it */
const PAYLOAD = {
  authorization: { from: PAYER, to: MERCHANT, value: '1000000', validAfter: '0', validBefore: '4102444800', nonce: NONCE },
  signature: '0x' + 'a1'.repeat(32) + 'b2'.repeat(32) + '1b',
};

/** A verified payment of 1 USDC (6 decimals) from PAYER to MERCHANT; `overrides` set the rest. */
export function verificationRow(overrides: Partial<Verification> = {}): Verification {
  return {
    id: 'ver_1',
    status: 'verified',
    protocolVersion: 2,
    surface: 'v1',
    chainId: CHAIN_ID,
    // an overridden chain's id, unless the override names the network too
    network: evmNetworkId(overrides.chainId ?? CHAIN_ID),
    networkName: evmNetworkId(overrides.chainId ?? CHAIN_ID),
    tokenAddress: TOKEN,
    payer: PAYER,
    merchant: MERCHANT,
    amount: '1000000',
    expectedAmount: '1000000',
    nonce: NONCE,
    validAfter: '0',
    validBefore: '4102444800',
    signature: PAYLOAD.signature,
    authorizationFingerprint: 'f1'.repeat(32),
    mechanism: 'exact/eip3009',
    scheme: 'exact',
    nonceSpace: TOKEN,
    payload: PAYLOAD,
    request: null,
    metadata: null,
    webhookUrl: null,
    failureMessage: null,
    failureDetails: null,
    verifyMs: 5,
    createdAt: new Date(CREATED_AT),
    updatedAt: new Date(CREATED_AT),
    ...overrides,
  };
}

/** A settlement as it starts (state `pending`, nothing sent, nothing paid) of the payment above. */
export function settlementRow(overrides: Partial<Settlement> = {}): Settlement {
  return {
    id: 'stl_1',
    verificationId: 'ver_1',
    paymentKey: `${CHAIN_ID}:${TOKEN}:${PAYER}:${NONCE}`,
    surface: 'v1',
    state: 'pending',
    chainId: CHAIN_ID,
    network: evmNetworkId(overrides.chainId ?? CHAIN_ID),
    tokenAddress: TOKEN,
    payer: PAYER,
    merchant: MERCHANT,
    amount: '1000000',
    nonce: NONCE,
    authorizationFingerprint: 'f1'.repeat(32),
    mechanism: 'exact/eip3009',
    scheme: 'exact',
    nonceSpace: TOKEN,
    payload: PAYLOAD,
    feeAmount: '10000',
    feeTxHash: null,
    feeCollectedAt: null,
    settlementTxHash: null,
    settledAt: null,
    merchantPaid: false,
    errorCode: null,
    errorMessage: null,
    errorDetails: null,
    attentionReason: null,
    attentionAt: null,
    waitingReason: null,
    waitingSince: null,
    waitingDetail: null,
    finality: null,
    reorgCount: 0,
    settlementMode: null,
    admission: null,
    sendClaimedAt: null,
    transferDecision: null,
    metadata: null,
    createdAt: new Date(CREATED_AT),
    updatedAt: new Date(CREATED_AT),
    ...overrides,
  };
}

/**
 * A settlement with its verification, the verification agreeing with it (same id, network, token,
 * payer, merchant, amount, nonce, fingerprint and surface) unless `verification` says otherwise.
 */
export function settlementWithVerification(
  settlement: Partial<Settlement> = {},
  verification: Partial<Verification> = {},
): Settlement & { verification: Verification } {
  const row = settlementRow(settlement);
  return {
    ...row,
    verification: verificationRow({
      id: row.verificationId,
      surface: row.surface,
      chainId: row.chainId,
      network: row.network,
      networkName: row.network,
      tokenAddress: row.tokenAddress,
      payer: row.payer,
      merchant: row.merchant,
      amount: row.amount,
      expectedAmount: row.amount,
      nonce: row.nonce,
      authorizationFingerprint: row.authorizationFingerprint,
      ...verification,
    }),
  };
}
