import { Wallet } from 'ethers';
import { bytesToHex, ErrorCode, ServiceUnavailableError, type TransferAuthorization } from '@facilitator/core';
import { eip3009PaymentOf, exactEip3009, PERMIT2_ADDRESS, TRANSFER_WITH_AUTHORIZATION_TYPES, X402_EXACT_PERMIT2_PROXY, EXACT_EIP3009, EXACT_PERMIT2 } from '@facilitator/payment-mechanisms';
import type { NewVerificationRow, SettlementRow, StoredVerification, VerificationRow } from '@facilitator/db';
import type { ChainReader } from './chain-reader';
import { FailureReason } from './failure-reasons';
import type { Payment } from './payment';
import { DOMAIN, MERCHANT, NETWORK, payer, SEPARATOR, signedPermit2Payment, stranger, TOKEN, TREASURY } from './testing/fixtures';
import { VerificationService, type VerificationServiceOptions, type VerificationStore } from './verification-service';

// The engine's checks 2–7 in the spec's order, against an in-memory chain and store: which check
// answers, what is asked of the chain, and what is stored.

const PAYER = payer.address.toLowerCase();
const CONTRACT_WALLET = '0x' + 'ee'.repeat(20);
const NONCE = '0x' + '0c'.repeat(32);
const NOW = 1_700_000_000;
const MARGIN = 30;

interface PaymentFields {
  authorization?: Partial<TransferAuthorization>;
  expected?: Partial<Payment['expected']>;
  signer?: Wallet;
}

/** A payment as the normalizers build it: lowercase addresses, signed with ethers over its own authorization. */
async function paymentOf(fields: PaymentFields = {}): Promise<Payment> {
  const authorization: TransferAuthorization = {
    from: PAYER,
    to: MERCHANT,
    value: 1_000_000n,
    validAfter: BigInt(NOW - 60),
    validBefore: BigInt(NOW + 3600),
    nonce: NONCE,
    ...fields.authorization,
  };
  const signature = await (fields.signer ?? payer).signTypedData(DOMAIN, TRANSFER_WITH_AUTHORIZATION_TYPES, authorization);
  return {
    protocolVersion: 2,
    mechanism: exactEip3009,
    surface: 'v1',
    network: NETWORK,
    networkName: 'eip155:84532',
    ...eip3009PaymentOf(authorization, signature.toLowerCase(), NETWORK),
    expected: { payTo: MERCHANT, amount: 1_000_000n, token: TOKEN, ...fields.expected },
    request: { kind: 'form-a' },
  };
}

type ContractAnswer = Awaited<ReturnType<ChainReader['isValidContractSignature']>>;

/** A chain that answers as configured and records what it was asked. */
class FakeChain implements ChainReader {
  usedNonces = new Set<string>();
  contractAnswer: ContractAnswer = undefined;
  failing = false;
  readonly asked: string[] = [];
  readonly contractQuestions: Array<{ chainId: number; signer: string; digest: string; signature: string }> = [];

  async domainSeparator(chainId: number): Promise<Uint8Array> {
    this.asked.push(`domainSeparator ${chainId}`);
    if (this.failing) throw new Error('connect ECONNREFUSED');
    return SEPARATOR;
  }

  async isAuthorizationUsed(chainId: number, payerAddress: string, nonce: string): Promise<boolean> {
    this.asked.push(`isAuthorizationUsed ${chainId} ${payerAddress} ${nonce}`);
    return this.usedNonces.has(`${payerAddress}:${nonce}`);
  }

  /** a contract read's answer by `to` and selector (0x + 8 hex), a zero word otherwise */
  readonly reads = new Map<string, string>();

  async readContract(chainId: number, to: string, data: string): Promise<string> {
    this.asked.push(`readContract ${chainId} ${to} ${data.slice(0, 10)}`);
    if (this.failing) throw new Error('connect ECONNREFUSED');
    return this.reads.get(`${to}:${data.slice(0, 10)}`) ?? '0x' + '0'.repeat(64);
  }

  async isValidContractSignature(chainId: number, signer: string, digest: Uint8Array, signature: string): Promise<ContractAnswer> {
    this.asked.push(`isValidContractSignature ${signer}`);
    this.contractQuestions.push({ chainId, signer, digest: bytesToHex(digest), signature });
    return this.contractAnswer;
  }
}

/** The verifications table in memory; `usedBy` and `heldBy` are what the insert's nonce lookup finds. */
class FakeVerifications implements VerificationStore {
  readonly rows = new Map<string, VerificationRow>();
  readonly calls: string[] = [];
  usedBy: string | null = null;
  heldBy: string | null = null;

  private store(row: NewVerificationRow): VerificationRow {
    const at = new Date(NOW * 1000);
    const record: VerificationRow = {
      id: row.id,
      status: row.status,
      protocolVersion: row.protocolVersion,
      surface: row.surface,
      chainId: row.chainId,
      network: row.network,
      networkName: row.networkName,
      tokenAddress: row.tokenAddress ?? null,
      payer: row.payer ?? null,
      merchant: row.merchant ?? null,
      amount: row.amount ?? null,
      expectedAmount: row.expectedAmount ?? null,
      nonce: row.nonce ?? null,
      validAfter: row.validAfter ?? null,
      validBefore: row.validBefore ?? null,
      signature: row.signature ?? null,
      authorizationFingerprint: row.authorizationFingerprint ?? null,
      mechanism: row.mechanism,
      scheme: row.scheme,
      nonceSpace: row.nonceSpace ?? null,
      payload: (row.payload ?? null) as VerificationRow['payload'],
      request: (row.request ?? null) as VerificationRow['request'],
      metadata: (row.metadata ?? null) as VerificationRow['metadata'],
      webhookUrl: row.webhookUrl ?? null,
      failureMessage: row.failureMessage ?? null,
      failureDetails: (row.failureDetails ?? null) as VerificationRow['failureDetails'],
      verifyMs: row.verifyMs ?? null,
      createdAt: at,
      updatedAt: at,
    };
    this.rows.set(record.id, record);
    return record;
  }

  async create(row: NewVerificationRow): Promise<VerificationRow> {
    this.calls.push('create');
    return this.store(row);
  }

  async createCheckingNonce(row: NewVerificationRow): Promise<StoredVerification> {
    this.calls.push('createCheckingNonce');
    return { record: this.store(row), usedBy: this.usedBy, heldBy: this.heldBy };
  }

  async reject(id: string, message: string, details: Record<string, unknown>): Promise<VerificationRow> {
    this.calls.push('reject');
    const row = this.rows.get(id)!;
    const rejected: VerificationRow = {
      ...row,
      status: 'rejected',
      failureMessage: message,
      failureDetails: details as VerificationRow['failureDetails'],
      request: null,
      metadata: null,
      signature: null,
    };
    this.rows.set(id, rejected);
    return rejected;
  }
}

function setup(options: Partial<VerificationServiceOptions> & { ourSettlement?: string } = {}) {
  const chain = new FakeChain();
  const verifications = new FakeVerifications();
  const nonceLookups: string[] = [];
  const service = new VerificationService({
    chain,
    verifications,
    settlements: {
      findNonceUse: async ({ chainId, nonceSpace, payer: payerAddress, nonce }) => {
        nonceLookups.push(`${chainId}:${nonceSpace}:${payerAddress}:${nonce}`);
        return options.ourSettlement ? ({ id: options.ourSettlement } as SettlementRow) : null;
      },
    },
    treasuryAddress: TREASURY,
    expiryMarginSeconds: MARGIN,
    minPaymentAmount: 0n,
    now: () => NOW,
    ...options,
  });
  return { chain, verifications, nonceLookups, service };
}

describe('VerificationService', () => {
  it('verifies a good payment: asks the chain about its nonce, stores it with its signature and request', async () => {
    const { chain, verifications, service } = setup();
    const payment = await paymentOf();
    const outcome = await service.verify(payment);
    expect(outcome.failure).toBeUndefined();
    expect(outcome.record).toMatchObject({
      status: 'verified',
      protocolVersion: 2,
      surface: 'v1',
      chainId: 84532,
      network: 'eip155:84532',
      tokenAddress: TOKEN,
      payer: PAYER,
      merchant: MERCHANT,
      amount: '1000000',
      expectedAmount: '1000000',
      nonce: NONCE,
      signature: payment.signature,
      request: { kind: 'form-a' },
      failureMessage: null,
      failureDetails: null,
    });
    expect(outcome.record.id).toMatch(/^ver_/);
    // the nonce and whether the payer has code (USDC asks a payer with code by ERC-1271), asked together
    expect(chain.asked).toEqual(['domainSeparator 84532', `isAuthorizationUsed 84532 ${PAYER} ${NONCE}`, `isValidContractSignature ${PAYER}`]);
    expect(verifications.calls).toEqual(['createCheckingNonce']);
  });

  it("asks a mechanism only the capabilities it offers: one without an offline signature or a nonce space reads neither the domain, the payer's code nor a nonce", async () => {
    const { chain, verifications, service } = setup();
    const payment = { ...(await paymentOf({ signer: stranger })), mechanism: { ...exactEip3009, signature: undefined, nonce: undefined } };
    const outcome = await service.verify(payment);
    expect(outcome.failure).toBeUndefined();
    expect(chain.asked).toEqual([]);
    // the payment's identity still holds its nonce against another verified payment's
    expect(verifications.calls).toEqual(['createCheckingNonce']);
  });

  it('stores how long the verify took, its chain reads included (the status page\'s verify latency)', async () => {
    const { chain, verifications, service } = setup();
    const read = chain.isAuthorizationUsed.bind(chain);
    chain.isAuthorizationUsed = async (...args: Parameters<typeof read>) => {
      await new Promise((resolve) => setTimeout(resolve, 40));
      return read(...args);
    };
    const outcome = await service.verify(await paymentOf());
    const stored = verifications.rows.get(outcome.record.id)!;
    expect(stored.verifyMs).toBeGreaterThanOrEqual(39);
    expect(stored.verifyMs).toBeLessThan(5_000);
  });

  it('tells the listener about each stored verification', async () => {
    const told: Array<{ status: string; reason?: string; payment: Payment }> = [];
    const { service } = setup({
      onVerified: async (outcome, payment) => {
        told.push({ status: outcome.record.status, reason: outcome.failure?.reason, payment });
      },
    });
    const good = await paymentOf();
    const bad = await paymentOf({ expected: { amount: 5n } });
    await service.verify(good);
    await service.verify(bad);
    expect(told).toEqual([
      { status: 'verified', reason: undefined, payment: good },
      { status: 'rejected', reason: FailureReason.AmountMismatch, payment: bad },
    ]);
  });

  describe('each check refuses on its own, stores the rejection without the bodies, and never asks about the nonce', () => {
    it.each<[string, PaymentFields, Partial<VerificationServiceOptions>, string, string, Record<string, unknown>]>([
      [
        'a signature by another key',
        { signer: stranger },
        {},
        FailureReason.InvalidSignature,
        'invalid signature',
        { reason: 'signature was not made by authorization.from', recovered: stranger.address.toLowerCase(), expected: PAYER },
      ],
      [
        'a payment to another address than payTo',
        { expected: { payTo: '0x' + 'cc'.repeat(20) } },
        {},
        FailureReason.RecipientMismatch,
        'payment must be to merchant address',
        { authorization_to: MERCHANT, expected_payTo: '0x' + 'cc'.repeat(20), reason: 'authorization.to does not equal the merchant address (payTo)' },
      ],
      [
        'a payment to the treasury',
        { authorization: { to: TREASURY }, expected: { payTo: TREASURY } },
        {},
        FailureReason.RecipientIsTreasury,
        'payment must be to merchant address',
        {
          authorization_to: TREASURY,
          expected_payTo: TREASURY,
          reason: 'the authorization pays the facilitator treasury; payments go directly to the merchant',
        },
      ],
      [
        'an amount other than asked',
        { expected: { amount: 2_000_000n } },
        {},
        FailureReason.AmountMismatch,
        'amount mismatch',
        { authorization_value: '1000000', expected_amount: '2000000' },
      ],
      [
        'an amount below MIN_PAYMENT_AMOUNT',
        {},
        { minPaymentAmount: 1_000_001n },
        FailureReason.AmountBelowMinimum,
        'amount below minimum',
        { authorization_value: '1000000', minimum_amount: '1000001' },
      ],
      [
        'another token',
        { expected: { token: '0x' + 'dd'.repeat(20) } },
        {},
        FailureReason.TokenMismatch,
        'token mismatch',
        { expected_token: '0x' + 'dd'.repeat(20), supported_token: TOKEN, reason: `only the token ${TOKEN} is settled on eip155:84532` },
      ],
      [
        'an authorization not valid yet',
        { authorization: { validAfter: BigInt(NOW) } },
        {},
        FailureReason.NotYetValid,
        'authorization not yet valid',
        { validAfter: String(NOW), currentTime: String(NOW) },
      ],
      [
        'an expired authorization',
        { authorization: { validBefore: BigInt(NOW - 1) } },
        {},
        FailureReason.Expired,
        'authorization expired',
        { validBefore: String(NOW - 1), currentTime: String(NOW) },
      ],
      [
        'an authorization expiring within the margin',
        { authorization: { validBefore: BigInt(NOW + MARGIN) } },
        {},
        FailureReason.ExpiresTooSoon,
        'authorization expires too soon to be settled',
        { validBefore: String(NOW + MARGIN), currentTime: String(NOW), minimum_validity_seconds: MARGIN },
      ],
    ])('%s', async (_label, fields, options, reason, message, details) => {
      const { chain, verifications, service } = setup(options);
      const outcome = await service.verify(await paymentOf(fields));
      expect(outcome.failure).toEqual({ reason, message, details, mechanism: EXACT_EIP3009 });
      expect(outcome.record).toMatchObject({ status: 'rejected', failureMessage: message, failureDetails: details, signature: null, request: null });
      expect(verifications.calls).toEqual(['create']);
      expect(chain.asked.filter((q) => q.startsWith('isAuthorizationUsed'))).toEqual([]);
    });
  });

  describe('the merchant’s own minimum', () => {
    it('applies instead of the default', async () => {
      const asked: string[] = [];
      const { service } = setup({
        minPaymentAmount: 0n,
        merchantMinimum: async (merchant) => {
          asked.push(merchant);
          return 1_500_000n;
        },
      });
      const outcome = await service.verify(await paymentOf());
      expect(outcome.failure).toEqual({
        mechanism: EXACT_EIP3009,
        reason: FailureReason.AmountBelowMinimum,
        message: 'amount below minimum',
        details: { authorization_value: '1000000', minimum_amount: '1500000' },
      });
      expect(asked).toEqual([MERCHANT]);
    });

    it('falls back to the default when the merchant set none', async () => {
      const { service } = setup({ minPaymentAmount: 2_000_000n, merchantMinimum: async () => undefined });
      expect((await service.verify(await paymentOf())).failure?.details).toEqual({ authorization_value: '1000000', minimum_amount: '2000000' });
    });
  });

  describe('check 7: the nonce', () => {
    it('refuses a nonce the chain reports used or cancelled, looking for a settlement of ours', async () => {
      const { chain, verifications, nonceLookups, service } = setup();
      chain.usedNonces.add(`${PAYER}:${NONCE}`);
      const outcome = await service.verify(await paymentOf());
      expect(outcome.failure).toEqual({
        mechanism: EXACT_EIP3009,
        reason: FailureReason.NonceUsed,
        message: 'nonce already used',
        details: { nonce: NONCE, reason: 'the authorization was already used or cancelled on chain' },
      });
      expect(outcome.record.status).toBe('rejected');
      expect(nonceLookups).toEqual([`84532:${TOKEN}:${PAYER}:${NONCE}`]);
      expect(verifications.calls).toEqual(['create']);
    });

    it('names our settlement when it was the one that used the nonce', async () => {
      const { chain, service } = setup({ ourSettlement: 'stl_ours' });
      chain.usedNonces.add(`${PAYER}:${NONCE}`);
      expect((await service.verify(await paymentOf())).failure).toEqual({
        mechanism: EXACT_EIP3009,
        reason: FailureReason.NonceUsed,
        message: 'nonce already used',
        details: { nonce: NONCE, reason: 'the authorization was already used by a settlement', settlement_id: 'stl_ours' },
      });
    });

    it('rejects the stored row when a settlement of ours holds the nonce though the chain does not show it yet', async () => {
      const { verifications, nonceLookups, service } = setup();
      verifications.usedBy = 'stl_inflight';
      const outcome = await service.verify(await paymentOf());
      const details = { nonce: NONCE, reason: 'the authorization was already used by a settlement', settlement_id: 'stl_inflight' };
      expect(outcome.failure).toEqual({ reason: FailureReason.NonceUsed, message: 'nonce already used', details, mechanism: EXACT_EIP3009 });
      expect(outcome.record).toMatchObject({ status: 'rejected', failureMessage: 'nonce already used', failureDetails: details, signature: null });
      expect(verifications.calls).toEqual(['createCheckingNonce', 'reject']);
      expect(nonceLookups).toEqual([]);
    });

    it('rejects the stored row when another authorization of the payer holds the nonce, without naming it', async () => {
      const { verifications, service } = setup();
      verifications.heldBy = 'stl_other_merchants';
      const outcome = await service.verify(await paymentOf());
      expect(outcome.failure).toEqual({
        mechanism: EXACT_EIP3009,
        reason: FailureReason.NonceHeld,
        message: 'nonce already used',
        details: { nonce: NONCE, reason: expect.stringContaining('another authorization with this nonce') },
      });
      expect(JSON.stringify(outcome.failure)).not.toContain('stl_other_merchants');
      expect(outcome.record).toMatchObject({ status: 'rejected', failureMessage: 'nonce already used', signature: null });
    });

    it('stores the fingerprint of what the payer signed with the row', async () => {
      const { verifications, service } = setup();
      const outcome = await service.verify(await paymentOf());
      expect(outcome.record.authorizationFingerprint).toMatch(/^[0-9a-f]{64}$/);
      expect(verifications.rows.get(outcome.record.id)?.authorizationFingerprint).toBe(outcome.record.authorizationFingerprint);
    });
  });

  describe('contract wallets (ERC-1271)', () => {
    // the wallet's owner key signs; the authorization is from the wallet's address
    const walletPayment = () => paymentOf({ authorization: { from: CONTRACT_WALLET } });

    it('accepts a signature the wallet accepts, asking it about the payment’s digest', async () => {
      const { chain, service } = setup();
      chain.contractAnswer = true;
      const payment = await walletPayment();
      const outcome = await service.verify(payment);
      expect(outcome.failure).toBeUndefined();
      expect(outcome.record).toMatchObject({ status: 'verified', payer: CONTRACT_WALLET });
      expect(chain.contractQuestions).toEqual([
        {
          chainId: 84532,
          signer: CONTRACT_WALLET,
          digest: bytesToHex(payment.mechanism.signature!.signedDigest(payment.payload, SEPARATOR)),
          signature: payment.signature,
        },
      ]);
    });

    it('refuses a signature the wallet rejects', async () => {
      const { chain, service } = setup();
      chain.contractAnswer = false;
      expect((await service.verify(await walletPayment())).failure).toEqual({
        mechanism: EXACT_EIP3009,
        reason: FailureReason.InvalidSignature,
        message: 'invalid signature',
        details: { reason: 'the payer contract (ERC-1271) rejected the signature', recovered: PAYER, expected: CONTRACT_WALLET },
      });
      expect(chain.asked.filter((q) => q.startsWith('isAuthorizationUsed'))).toEqual([]);
    });

    it('passes on why an undeployed (ERC-6492) wallet was refused', async () => {
      const { chain, service } = setup();
      chain.contractAnswer = { refused: 'the ERC-6492 factory is not allowlisted' };
      expect((await service.verify(await walletPayment())).failure?.details.reason).toBe('the ERC-6492 factory is not allowlisted');
    });

    it('asks whether a payer whose own key signed has code, and follows USDC: its code decides, not the key', async () => {
      const { chain, service } = setup();
      expect((await service.verify(await paymentOf())).failure).toBeUndefined(); // no code: the key decides
      expect(chain.contractQuestions).toHaveLength(1);
      chain.contractAnswer = false; // code that does not accept: USDC would refuse the transfer
      const refused = await service.verify(await paymentOf());
      expect(refused.failure).toMatchObject({ reason: FailureReason.InvalidSignature, details: { reason: expect.stringContaining('ERC-1271 only') } });
    });
  });

  describe('the first failing check in the spec’s order is the one reported', () => {
    // pairs of faults, each the earlier check's against a later one's
    it.each<[string, PaymentFields, Partial<VerificationServiceOptions>, string]>([
      ['bad signature + wrong payTo', { signer: stranger, expected: { payTo: '0x' + 'cc'.repeat(20) } }, {}, FailureReason.InvalidSignature],
      ['bad signature + expired', { signer: stranger, authorization: { validBefore: BigInt(NOW - 1) } }, {}, FailureReason.InvalidSignature],
      ['wrong payTo + amount mismatch', { expected: { payTo: '0x' + 'cc'.repeat(20), amount: 5n } }, {}, FailureReason.RecipientMismatch],
      ['amount mismatch + below minimum', { expected: { amount: 5n } }, { minPaymentAmount: 2_000_000n }, FailureReason.AmountMismatch],
      ['below minimum + wrong token', { expected: { token: '0x' + 'dd'.repeat(20) } }, { minPaymentAmount: 2_000_000n }, FailureReason.AmountBelowMinimum],
      ['wrong token + not yet valid', { expected: { token: '0x' + 'dd'.repeat(20) }, authorization: { validAfter: BigInt(NOW + 10) } }, {}, FailureReason.TokenMismatch],
      ['amount mismatch + expired', { expected: { amount: 5n }, authorization: { validBefore: BigInt(NOW - 1) } }, {}, FailureReason.AmountMismatch],
    ])('%s', async (_label, fields, options, reason) => {
      const { service } = setup(options);
      expect((await service.verify(await paymentOf(fields))).failure?.reason).toBe(reason);
    });

    it('an offline failure wins over a used nonce (the nonce is never asked)', async () => {
      const { chain, service } = setup();
      chain.usedNonces.add(`${PAYER}:${NONCE}`);
      expect((await service.verify(await paymentOf({ authorization: { validBefore: BigInt(NOW - 1) } }))).failure?.reason).toBe(FailureReason.Expired);
      // whether the payer has code is asked (the signature is check 2), never the nonce
      expect(chain.asked).toEqual(['domainSeparator 84532', `isValidContractSignature ${PAYER}`]);
    });

    it('a contract wallet that accepts its signature still meets the later checks', async () => {
      const { chain, service } = setup();
      chain.contractAnswer = true;
      const payment = await paymentOf({ authorization: { from: CONTRACT_WALLET }, expected: { amount: 5n } });
      expect((await service.verify(payment)).failure?.reason).toBe(FailureReason.AmountMismatch);
    });
  });

  it('answers 503 and stores nothing when the chain cannot be asked', async () => {
    const { chain, verifications, service } = setup();
    chain.failing = true;
    const error = await service.verify(await paymentOf()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({
      code: ErrorCode.ServiceUnavailable,
      status: 503,
      message: 'the eip155:84532 RPC endpoint did not answer; try again',
      details: { network: 'eip155:84532', dependency: 'rpc' },
    });
    expect(verifications.calls).toEqual([]);
  });
});

describe('VerificationService: exact through Permit2', () => {
  const PERMIT2 = PERMIT2_ADDRESS;
  const ALLOWANCE = '0xdd62ed3e';
  const NONCE_BITMAP = '0x4fe02b44';
  const word = (value: bigint) => '0x' + value.toString(16).padStart(64, '0');
  const permit2Payment = (nonce = 77n) => signedPermit2Payment({ nonce, validAfter: BigInt(NOW - 60), deadline: BigInt(NOW + 3600) });

  const PROXY_PERMIT2 = '0x6afdd850';
  const proxyWord = '0x' + PERMIT2.slice(2).padStart(64, '0');

  /** the chain has x402's exact proxy (naming Permit2), and the payer approved Permit2 for `allowance` */
  function approved(chain: FakeChain, allowance = 1_000_000n) {
    chain.reads.set(`${X402_EXACT_PERMIT2_PROXY}:${PROXY_PERMIT2}`, proxyWord);
    chain.reads.set(`${TOKEN}:${ALLOWANCE}`, word(allowance));
  }

  it("verifies a payment whose payer approved Permit2: asks Permit2's bitmap and the token's allowance, stores its own mechanism, space and payload", async () => {
    const { chain, service } = setup();
    approved(chain);
    const payment = await permit2Payment();
    const outcome = await service.verify(payment);
    expect(outcome.failure).toBeUndefined();
    expect(chain.asked).toEqual(
      expect.arrayContaining([`readContract 84532 ${PERMIT2} ${NONCE_BITMAP}`, `readContract 84532 ${TOKEN} ${ALLOWANCE}`]),
    );
    expect(chain.asked.filter((q) => q.startsWith('isAuthorizationUsed') || q.startsWith('domainSeparator'))).toEqual([]);
    expect(outcome.record).toMatchObject({
      status: 'verified',
      mechanism: EXACT_PERMIT2,
      nonceSpace: PERMIT2,
      payer: PAYER,
      merchant: MERCHANT,
      amount: '1000000',
      nonce: word(77n),
      validBefore: String(NOW + 3601),
      payload: { permit2Authorization: expect.objectContaining({ spender: X402_EXACT_PERMIT2_PROXY, nonce: '77' }) },
    });
  });

  it("refuses every Permit2 payment on a chain where x402's exact proxy is missing (a call to it would succeed and move nothing), and asks once it is there only until found", async () => {
    const { chain, service } = setup();
    chain.reads.set(`${TOKEN}:${ALLOWANCE}`, word(1_000_000n));
    const outcome = await service.verify(await permit2Payment());
    expect(outcome.failure).toMatchObject({
      mechanism: EXACT_PERMIT2,
      reason: FailureReason.MechanismUnavailable,
      details: { mechanism: EXACT_PERMIT2, reason: expect.stringContaining('does not name Permit2') },
    });
    expect(outcome.record.status).toBe('rejected');

    chain.reads.set(`${X402_EXACT_PERMIT2_PROXY}:${PROXY_PERMIT2}`, proxyWord);
    expect((await service.verify(await permit2Payment(78n))).failure).toBeUndefined();
    expect((await service.verify(await permit2Payment(79n))).failure).toBeUndefined();
    expect(chain.asked.filter((q) => q.includes(PROXY_PERMIT2))).toHaveLength(2);
  });

  it('refuses a payment whose payer has not approved Permit2 for the amount, and never asks about the nonce first', async () => {
    const { chain, service } = setup();
    approved(chain, 999_999n);
    const outcome = await service.verify(await permit2Payment());
    expect(outcome.failure).toMatchObject({
      mechanism: EXACT_PERMIT2,
      reason: FailureReason.AllowanceRequired,
      details: { token: TOKEN, spender: PERMIT2, allowance: '999999', required: '1000000' },
    });
    expect(outcome.record).toMatchObject({ status: 'rejected', payload: null });
  });

  it("refuses a nonce whose bit is set in Permit2's bitmap (used, or invalidated by the payer), looking for ours in Permit2's space", async () => {
    const { chain, nonceLookups, service } = setup();
    approved(chain);
    const nonce = (5n << 8n) + 3n; // word 5, bit 3
    chain.reads.set(`${PERMIT2}:${NONCE_BITMAP}`, word(1n << 3n));
    const outcome = await service.verify(await permit2Payment(nonce));
    expect(outcome.failure).toMatchObject({ mechanism: EXACT_PERMIT2, reason: FailureReason.NonceUsed });
    expect(nonceLookups).toEqual([`84532:${PERMIT2}:${PAYER}:${word(nonce)}`]);
  });
});
