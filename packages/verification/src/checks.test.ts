import { TypedDataEncoder, Wallet } from 'ethers';
import { bytesToHex, type Eip712Domain, type TransferAuthorization } from '@facilitator/core';
import { eip3009PaymentOf, exactEip3009, permit2DomainSeparator, TRANSFER_WITH_AUTHORIZATION_TYPES, X402_EXACT_PERMIT2_PROXY } from '@facilitator/payment-mechanisms';
import type { ChainReader } from './chain-reader';
import {
  checkAmount,
  checkContractSignature,
  checkMinimum,
  checkPayerSignature,
  checkRecipient,
  checkSignature,
  checkSpender,
  checkTime,
  checkToken,
  type OfflineCheckContext,
} from './checks';
import { FailureReason, type VerificationFailure } from './failure-reasons';
import type { Payment } from './payment';
import { DOMAIN, MERCHANT, NETWORK, payer, SEPARATOR, signedPermit2Payment, stranger, TOKEN, TREASURY } from './testing/fixtures';

// Each check on its own, on payments signed by a real key with ethers' generic EIP-712 signer (an
// independent implementation of the digest the checks compute by hand).

const NONCE = '0x' + '0c'.repeat(32);
const NOW = 1_700_000_000n;

function authorizationOf(fields: Partial<TransferAuthorization> = {}): TransferAuthorization {
  return {
    from: payer.address.toLowerCase(),
    to: MERCHANT,
    value: 1_000_000n,
    validAfter: NOW - 60n,
    validBefore: NOW + 3600n,
    nonce: NONCE,
    ...fields,
  };
}

/** A payment as the normalizers build it, signed by `signer` over `signed` (default: the authorization itself). */
async function signedPayment(
  options: { authorization?: TransferAuthorization; signed?: TransferAuthorization; signer?: Wallet; domain?: Eip712Domain; expected?: Partial<Payment['expected']> } = {},
): Promise<Payment> {
  const authorization = options.authorization ?? authorizationOf();
  const signature = await (options.signer ?? payer).signTypedData(options.domain ?? DOMAIN, TRANSFER_WITH_AUTHORIZATION_TYPES, options.signed ?? authorization);
  return {
    protocolVersion: 2,
    mechanism: exactEip3009,
    surface: 'v1',
    network: NETWORK,
    networkName: 'eip155:84532',
    ...eip3009PaymentOf(authorization, signature.toLowerCase(), NETWORK),
    expected: { payTo: MERCHANT, amount: authorization.value, token: TOKEN, ...options.expected },
    request: {},
  };
}

function contextOf(payment: Payment, fields: Partial<OfflineCheckContext> = {}): OfflineCheckContext {
  return { payment, domainSeparator: SEPARATOR, treasury: TREASURY, nowSeconds: NOW, marginSeconds: 30n, minimumAmount: 0n, ...fields };
}

describe('check 2: signature', () => {
  it('accepts the payer’s own signature and returns the digest it signed', async () => {
    const payment = await signedPayment();
    const { digest, failure } = checkSignature(contextOf(payment));
    expect(failure).toBeUndefined();
    expect(bytesToHex(digest!)).toBe(TypedDataEncoder.hash(DOMAIN, TRANSFER_WITH_AUTHORIZATION_TYPES, authorizationOf()));
  });

  it('refuses a signature made by another key, naming who signed', async () => {
    const payment = await signedPayment({ signer: stranger });
    expect(checkSignature(contextOf(payment)).failure).toEqual({
      reason: FailureReason.InvalidSignature,
      message: 'invalid signature',
      details: {
        reason: 'signature was not made by authorization.from',
        recovered: stranger.address.toLowerCase(),
        expected: payer.address.toLowerCase(),
      },
    });
  });

  it('refuses an authorization changed after signing (the payer signed 1 USDC, the request claims 2)', async () => {
    const payment = await signedPayment({ authorization: authorizationOf({ value: 2_000_000n }), signed: authorizationOf({ value: 1_000_000n }) });
    const { failure } = checkSignature(contextOf(payment));
    expect(failure?.reason).toBe(FailureReason.InvalidSignature);
    expect(failure?.details.recovered).not.toBe(payer.address.toLowerCase());
    expect(failure?.details.expected).toBe(payer.address.toLowerCase());
  });

  it('refuses a signature made under another EIP-712 domain (another chain)', async () => {
    const payment = await signedPayment({ domain: { ...DOMAIN, chainId: 8453 } });
    expect(checkSignature(contextOf(payment)).failure?.reason).toBe(FailureReason.InvalidSignature);
  });

  it('refuses a signature that is not 65 bytes, with no recovered address', async () => {
    const payment = { ...(await signedPayment()), signature: '0x' + '12'.repeat(64) };
    expect(checkSignature(contextOf(payment)).failure).toEqual({
      reason: FailureReason.InvalidSignature,
      message: 'invalid signature',
      details: { reason: 'signature is 64 bytes; an ECDSA signature is 65', recovered: null, expected: payer.address.toLowerCase() },
    });
  });
});

describe('check 3: recipient', () => {
  it('accepts a payment to the merchant', async () => {
    expect(checkRecipient(contextOf(await signedPayment()))).toBeUndefined();
  });

  it('refuses a payment to another address than payTo', async () => {
    const payment = await signedPayment({ expected: { payTo: '0x' + 'cc'.repeat(20) } });
    expect(checkRecipient(contextOf(payment))).toEqual({
      reason: FailureReason.RecipientMismatch,
      message: 'payment must be to merchant address',
      details: {
        authorization_to: MERCHANT,
        expected_payTo: '0x' + 'cc'.repeat(20),
        reason: 'authorization.to does not equal the merchant address (payTo)',
      },
    });
  });

  it('refuses a payment to the facilitator treasury, even when the requirements name it as payTo', async () => {
    const payment = await signedPayment({ authorization: authorizationOf({ to: TREASURY }), expected: { payTo: TREASURY } });
    expect(checkRecipient(contextOf(payment))).toEqual({
      reason: FailureReason.RecipientIsTreasury,
      message: 'payment must be to merchant address',
      details: {
        authorization_to: TREASURY,
        expected_payTo: TREASURY,
        reason: 'the authorization pays the facilitator treasury; payments go directly to the merchant',
      },
    });
  });
});

describe('check 4: amount', () => {
  it('accepts the exact amount', async () => {
    expect(checkAmount(contextOf(await signedPayment()))).toBeUndefined();
  });

  it.each([
    ['less', 999_999n],
    ['more', 1_000_001n],
  ])('refuses paying %s than asked', async (_label, expectedAmount) => {
    const payment = await signedPayment({ expected: { amount: expectedAmount } });
    expect(checkAmount(contextOf(payment))).toEqual({
      reason: FailureReason.AmountMismatch,
      message: 'amount mismatch',
      details: { authorization_value: '1000000', expected_amount: expectedAmount.toString() },
    });
  });
});

describe('check 4b: minimum', () => {
  it('accepts a value equal to the minimum, and any value when there is none', async () => {
    const payment = await signedPayment();
    expect(checkMinimum(contextOf(payment, { minimumAmount: 1_000_000n }))).toBeUndefined();
    expect(checkMinimum(contextOf({ ...payment, terms: { ...payment.terms, amount: 0n } }, { minimumAmount: 0n }))).toBeUndefined();
  });

  it('refuses a value one unit below the minimum', async () => {
    const payment = await signedPayment();
    expect(checkMinimum(contextOf(payment, { minimumAmount: 1_000_001n }))).toEqual({
      reason: FailureReason.AmountBelowMinimum,
      message: 'amount below minimum',
      details: { authorization_value: '1000000', minimum_amount: '1000001' },
    });
  });
});

describe('check 5: token', () => {
  it('accepts the network’s token, or requirements that name none', async () => {
    expect(checkToken(contextOf(await signedPayment()))).toBeUndefined();
    expect(checkToken(contextOf(await signedPayment({ expected: { token: undefined } })))).toBeUndefined();
  });

  it('refuses another token', async () => {
    const other = '0x' + 'dd'.repeat(20);
    expect(checkToken(contextOf(await signedPayment({ expected: { token: other } })))).toEqual({
      reason: FailureReason.TokenMismatch,
      message: 'token mismatch',
      details: { expected_token: other, supported_token: TOKEN, reason: `only the token ${TOKEN} is settled on eip155:84532` },
    });
  });
});

describe('check 6: validity window', () => {
  const timed = async (validAfter: bigint, validBefore: bigint) =>
    contextOf(await signedPayment({ authorization: authorizationOf({ validAfter, validBefore }) }), { marginSeconds: 30n });

  it('accepts validAfter < now and validBefore more than the margin ahead', async () => {
    expect(checkTime(await timed(NOW - 1n, NOW + 31n))).toBeUndefined();
  });

  it('refuses an authorization not valid yet (validAfter = now: USDC requires validAfter < now)', async () => {
    expect(checkTime(await timed(NOW, NOW + 3600n))).toEqual({
      reason: FailureReason.NotYetValid,
      message: 'authorization not yet valid',
      details: { validAfter: NOW.toString(), currentTime: NOW.toString() },
    });
  });

  it('refuses an expired authorization (validBefore = now)', async () => {
    expect(checkTime(await timed(0n, NOW))).toEqual({
      reason: FailureReason.Expired,
      message: 'authorization expired',
      details: { validBefore: NOW.toString(), currentTime: NOW.toString() },
    });
  });

  it('refuses one expiring within the settlement margin', async () => {
    expect(checkTime(await timed(0n, NOW + 30n))).toEqual({
      reason: FailureReason.ExpiresTooSoon,
      message: 'authorization expires too soon to be settled',
      details: { validBefore: (NOW + 30n).toString(), currentTime: NOW.toString(), minimum_validity_seconds: 30 },
    });
  });

  it('reports "not yet valid" before "expired" when both hold', async () => {
    expect(checkTime(await timed(NOW + 10n, NOW - 10n))?.reason).toBe(FailureReason.NotYetValid);
  });
});

describe('contract wallets (ERC-1271)', () => {
  const WALLET = '0x' + 'ee'.repeat(20);
  const ecdsaFailure: VerificationFailure = {
    reason: FailureReason.InvalidSignature,
    message: 'invalid signature',
    details: { reason: 'signature was not made by authorization.from', recovered: payer.address.toLowerCase(), expected: WALLET },
  };

  /** A chain whose wallet answers `answer`, recording what it was asked. */
  function walletChain(answer: Awaited<ReturnType<ChainReader['isValidContractSignature']>>) {
    const asked: Array<[number, string, string, string]> = [];
    const chain: ChainReader = {
      domainSeparator: async () => SEPARATOR,
      isAuthorizationUsed: async () => false,
      readContract: async () => '0x',
      isValidContractSignature: async (chainId, signer, digest, signature) => {
        asked.push([chainId, signer, bytesToHex(digest), signature]);
        return answer;
      },
    };
    return { chain, asked };
  }

  it('accepts what the wallet accepts, asking it about the signed digest', async () => {
    const payment = await signedPayment({ authorization: authorizationOf({ from: WALLET }) });
    const digest = checkSignature(contextOf(payment)).digest!;
    const { chain, asked } = walletChain(true);
    await expect(checkContractSignature(chain, payment, digest, ecdsaFailure)).resolves.toBeUndefined();
    expect(asked).toEqual([[84532, WALLET, bytesToHex(digest), payment.signature]]);
  });

  it('refuses what the wallet rejects, saying so', async () => {
    const payment = await signedPayment({ authorization: authorizationOf({ from: WALLET }) });
    await expect(checkContractSignature(walletChain(false).chain, payment, new Uint8Array(32), ecdsaFailure)).resolves.toEqual({
      ...ecdsaFailure,
      details: { ...ecdsaFailure.details, reason: 'the payer contract (ERC-1271) rejected the signature' },
    });
  });

  it('passes on the reason of a refusal (e.g. an ERC-6492 factory not allowlisted)', async () => {
    const payment = await signedPayment({ authorization: authorizationOf({ from: WALLET }) });
    const refused = { refused: 'ERC-6492 factory 0x01 is not allowlisted' };
    await expect(checkContractSignature(walletChain(refused).chain, payment, new Uint8Array(32), ecdsaFailure)).resolves.toEqual({
      ...ecdsaFailure,
      details: { ...ecdsaFailure.details, reason: 'ERC-6492 factory 0x01 is not allowlisted' },
    });
  });

  it('keeps the ECDSA failure as it is when the signer has no code', async () => {
    const payment = await signedPayment({ signer: stranger });
    await expect(checkContractSignature(walletChain(undefined).chain, payment, new Uint8Array(32), ecdsaFailure)).resolves.toBe(ecdsaFailure);
  });
});

describe("check 2 as USDC decides it (checkPayerSignature): an account with code is asked by ERC-1271 only", () => {
  function chainAnswering(answer: Awaited<ReturnType<ChainReader['isValidContractSignature']>>): { chain: ChainReader; asked: string[] } {
    const asked: string[] = [];
    return {
      asked,
      chain: {
        domainSeparator: async () => SEPARATOR,
        isAuthorizationUsed: async () => false,
        readContract: async () => '0x',
        isValidContractSignature: async (_chainId, signer) => {
          asked.push(signer);
          return answer;
        },
      },
    };
  }

  it('runs only for a mechanism with an offline signature: one without has no digest, nothing to fail and nothing to ask', async () => {
    const payment = { ...(await signedPayment({ signer: stranger })), mechanism: { ...exactEip3009, signature: undefined } };
    const { chain, asked } = chainAnswering(false);
    expect(checkSignature(contextOf(payment, { domainSeparator: undefined }))).toEqual({ failure: undefined });
    await expect(checkPayerSignature(chain, contextOf(payment, { domainSeparator: undefined }))).resolves.toBeUndefined();
    expect(asked).toEqual([]);
    // one that has it is never checked without its domain
    const signed = await signedPayment();
    expect(() => checkSignature(contextOf(signed, { domainSeparator: undefined }))).toThrow(/domain separator/);
  });

  it("takes the key's ECDSA signature from an account without code (one question to the chain)", async () => {
    const payment = await signedPayment();
    const { chain, asked } = chainAnswering(undefined);
    await expect(checkPayerSignature(chain, contextOf(payment))).resolves.toBeUndefined();
    expect(asked).toEqual([payer.address.toLowerCase()]);
  });

  it('refuses the same ECDSA signature when the account has code and its ERC-1271 check says no (or cannot answer)', async () => {
    const payment = await signedPayment();
    for (const answer of [false, { refused: 'the payer account (an EOA delegated by EIP-7702) (ERC-1271, asked with 300000 gas) failed (execution reverted)' }] as const) {
      const failure = await checkPayerSignature(chainAnswering(answer).chain, contextOf(payment));
      expect(failure).toMatchObject({ reason: FailureReason.InvalidSignature, message: 'invalid signature', details: { reason: expect.stringContaining('has code, so USDC checks its signature by ERC-1271 only') } });
    }
  });

  it("accepts it when the account's ERC-1271 check accepts it (a delegated EOA whose code checks its own key)", async () => {
    const payment = await signedPayment();
    await expect(checkPayerSignature(chainAnswering(true).chain, contextOf(payment))).resolves.toBeUndefined();
  });

  it('asks the wallet when the ECDSA signature is not the payer key’s, as before', async () => {
    const payment = await signedPayment({ signer: stranger });
    await expect(checkPayerSignature(chainAnswering(true).chain, contextOf(payment))).resolves.toBeUndefined();
    await expect(checkPayerSignature(chainAnswering(undefined).chain, contextOf(payment))).resolves.toMatchObject({ reason: FailureReason.InvalidSignature });
  });
});

describe('the checks read terms: a Permit2 payment', () => {
  const permit2Payment = (to = MERCHANT, fields: { token?: string; spender?: string } = {}) =>
    signedPermit2Payment({ to, ...fields, validAfter: NOW - 60n, deadline: NOW + 3600n });

  it("recovers the payer under Permit2's domain, not the token's", async () => {
    const payment = await permit2Payment();
    const separator = payment.mechanism.signature?.ownDomainSeparator?.(NETWORK);
    expect(separator).toEqual(permit2DomainSeparator(NETWORK.chainId));
    expect(checkSignature(contextOf(payment, { domainSeparator: separator })).failure).toBeUndefined();
    expect(checkSignature(contextOf(payment)).failure).toMatchObject({ reason: FailureReason.InvalidSignature });
  });

  it('passes checks 3 to 6 on its terms, and names its own fields when it fails one', async () => {
    const ctx = contextOf(await permit2Payment());
    expect(checkRecipient(ctx) ?? checkAmount(ctx) ?? checkMinimum(ctx) ?? checkToken(ctx) ?? checkTime(ctx)).toBeUndefined();
    const elsewhere = contextOf(await permit2Payment('0x' + 'cc'.repeat(20)));
    expect(checkRecipient(elsewhere)?.details).toEqual({
      authorization_to: '0x' + 'cc'.repeat(20),
      expected_payTo: MERCHANT,
      reason: 'permit2Authorization.witness.to does not equal the merchant address (payTo)',
    });
    // Permit2 moves it until its deadline included: expired one second after
    expect(checkTime({ ...ctx, nowSeconds: NOW + 3600n, marginSeconds: 0n })).toBeUndefined();
    expect(checkTime({ ...ctx, nowSeconds: NOW + 3601n, marginSeconds: 0n })?.reason).toBe(FailureReason.Expired);
  });

  it("refuses a permit for another spender than x402's exact proxy: valid, and only its spender could use it", async () => {
    const stranger = '0x' + '5e'.repeat(20);
    const ctx = contextOf(await permit2Payment(MERCHANT, { spender: stranger }));
    expect(checkSpender(ctx)).toEqual({
      reason: FailureReason.InvalidSpender,
      message: 'invalid spender',
      details: { spender: stranger, required_spender: X402_EXACT_PERMIT2_PROXY, reason: `permit2Authorization.spender must be ${X402_EXACT_PERMIT2_PROXY}, the contract that settles it` },
    });
    expect(checkSpender(contextOf(await signedPayment()))).toBeUndefined(); // EIP-3009 names no spender
  });

  it('refuses a permit of another token than the network settles, even when the requirements name none', async () => {
    const other = '0x' + '70'.repeat(20);
    const payment = await permit2Payment(MERCHANT, { token: other });
    expect(checkToken(contextOf({ ...payment, expected: { ...payment.expected, token: undefined } }))).toMatchObject({
      reason: FailureReason.TokenMismatch,
      details: { expected_token: other, supported_token: TOKEN },
    });
  });
});
