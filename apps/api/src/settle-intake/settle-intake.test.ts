// The settle intake's steps in order, on stubs: nothing is looked up, verified, stored or enqueued for a
// request that an earlier step refuses.
import { NotFoundError, PaymentConflictError, PaymentIdentifierConflictError } from '@facilitator/core';
import { authorizationFingerprint, eip3009PaymentOf, exactEip3009 } from '@facilitator/payment-mechanisms';
import type { Settlement, Verification } from '@facilitator/db';
import { PaymentIdentifiers, type Payment, type X402Payment } from '@facilitator/verification';
import type { SettleCommand } from './settle-command';
import { PartialSettleKeyRequired, SettleIntake, SettleKeyRequired, SettleRefused, type SettleIntakeDeps } from './settle-intake';

const MERCHANT = '0x' + 'aa'.repeat(20);
const PAYER = '0x' + '11'.repeat(20);

const authorizationOf = (amount: bigint) => ({ from: PAYER, to: MERCHANT, value: amount, validAfter: 0n, validBefore: 2_000_000_000n, nonce: '0x' + '0c'.repeat(32) });

function payment(amount: bigint): Payment {
  const network = { chainId: 84532, tokenAddress: '0x' + 'cc'.repeat(20) } as Payment['network'];
  return {
    protocolVersion: 2,
    mechanism: exactEip3009,
    surface: 'v1',
    network,
    networkName: 'eip155:84532',
    ...eip3009PaymentOf(authorizationOf(amount), '0x' + '5a'.repeat(65), network),
    expected: { payTo: MERCHANT, amount },
    request: {},
  };
}

const verified = (amount: bigint) => {
  const a = authorizationOf(amount);
  return {
    id: 'ver_1', status: 'verified', chainId: 84532, tokenAddress: '0x' + 'cc'.repeat(20), payer: PAYER, merchant: MERCHANT, nonce: a.nonce,
    amount: amount.toString(), expectedAmount: amount.toString(), validAfter: '0', validBefore: a.validBefore.toString(),
    signature: '0x' + '5a'.repeat(65), authorizationFingerprint: authorizationFingerprint(84532, '0x' + 'cc'.repeat(20), a),
  } as Verification;
};

function setup(options: { access?: 'open' | 'granted' | 'denied'; ownMinimum?: bigint; stored?: Verification | null; byId?: Verification | null; live?: boolean; boundTo?: string } = {}) {
  const calls: string[] = [];
  const deps: SettleIntakeDeps = {
    verifications: {
      findById: async () => (calls.push('findById'), options.byId ?? null),
      findLatestVerified: async () => (calls.push('findLatestVerified'), options.stored ?? null),
    },
    verifier: {
      checkRequirements: async () => (calls.push('checkRequirements'), undefined),
      verify: async () => (calls.push('verify'), { record: verified(10_000n) }),
    },
    merchants: {
      settleAccess: async () => (calls.push('settleAccess'), options.access ?? 'open'),
      minimumFor: async () => (calls.push('minimumFor'), options.ownMinimum),
    },
    requests: {
      start: async (_v, _surface, amount) => (calls.push(amount === undefined ? 'start' : `start(${amount})`), { settlement: { id: 'stl_1' } as Settlement, created: true }),
      liveSettlementOf: async () => (calls.push('liveSettlementOf'), options.live ? ({ id: 'stl_live' } as Settlement) : null),
      recordNothingSettled: async () => void calls.push('recordNothingSettled'),
    },
    minPaymentAmount: 10_000n,
    // the id is bound to `boundTo` when given, else to the payment it came with
    paymentIds: new PaymentIdentifiers({ bind: async (b) => (calls.push('bindPaymentId'), options.boundTo ?? b.authorizationFingerprint) }),
  };
  return { intake: new SettleIntake(deps), calls };
}

const formA = (amount: bigint): SettleCommand => ({ kind: 'form-a', payment: payment(amount) });
const x402 = (amount: bigint): SettleCommand => ({ kind: 'x402', payment: payment(amount), x402: { x402Version: 2, payment: payment(amount) } as X402Payment });

/** an x402 settle naming `settle` of a payment signed for at most `maximum` (upto) */
const uptoSettle = (maximum: bigint, settle: bigint): SettleCommand => {
  const p = { ...payment(maximum), settleAmount: settle };
  return { kind: 'x402', payment: p, x402: { x402Version: 2, payment: p } as X402Payment };
};

describe('SettleIntake', () => {
  describe('an upto settle, which names its amount', () => {
    it('the maximum needs no key (as an exact payment); less than it only by the merchant, with its settle key', async () => {
      const open = setup({ stored: verified(50_000n) });
      await expect(open.intake.admit(uptoSettle(50_000n, 50_000n), undefined)).resolves.toMatchObject({ settlement: { id: 'stl_1' } });
      expect(open.calls).toContain('start(50000)');
      // whoever holds the payload (its payer) could settle it for a token amount before the merchant
      for (const access of ['open', 'denied'] as const) {
        const refused = setup({ access, stored: verified(50_000n) });
        await expect(refused.intake.admit(uptoSettle(50_000n, 1n), access === 'denied' ? 'wrong' : undefined)).rejects.toBeInstanceOf(SettleKeyRequired);
        // before anything about the payment is looked up, verified, stored or bound
        expect(refused.calls).toEqual(['settleAccess']);
      }
      await expect(setup({ stored: verified(50_000n) }).intake.admit(uptoSettle(50_000n, 1n), undefined)).rejects.toBeInstanceOf(PartialSettleKeyRequired);
      const granted = setup({ access: 'granted', stored: verified(50_000n) });
      await expect(granted.intake.admit(uptoSettle(50_000n, 20_000n), 'key')).resolves.toMatchObject({ settlement: { id: 'stl_1' } });
      expect(granted.calls).toContain('start(20000)');
    });

    it('0 settles nothing and is recorded as the outcome: no settlement is started, unless the payment is settling another amount (409)', async () => {
      const nothing = setup({ access: 'granted', stored: verified(50_000n) });
      await expect(nothing.intake.admit(uptoSettle(50_000n, 0n), 'key')).resolves.toMatchObject({ settlement: null });
      expect(nothing.calls.some((c) => c.startsWith('start'))).toBe(false);
      expect(nothing.calls).toContain('recordNothingSettled');
      const settling = setup({ access: 'granted', stored: verified(50_000n), live: true });
      await expect(settling.intake.admit(uptoSettle(50_000n, 0n), 'key')).rejects.toBeInstanceOf(PaymentConflictError);
      expect(settling.calls).not.toContain('recordNothingSettled');
    });

    it('0 is less than the maximum: only the merchant settles it, with its settle key (issue 40, 7b)', async () => {
      for (const access of ['open', 'denied'] as const) {
        const refused = setup({ access, stored: verified(50_000n) });
        await expect(refused.intake.admit(uptoSettle(50_000n, 0n), access === 'denied' ? 'wrong' : undefined)).rejects.toBeInstanceOf(SettleKeyRequired);
        expect(refused.calls).toEqual(['settleAccess']);
      }
    });
  });


  it('a protected merchant without its key: refused before anything about the payment is looked up', async () => {
    const { intake, calls } = setup({ access: 'denied', stored: verified(10_000n) });
    await expect(intake.admit(formA(10_000n), undefined)).rejects.toBeInstanceOf(SettleKeyRequired);
    await expect(intake.admit(x402(10_000n), 'wrong')).rejects.toBeInstanceOf(SettleKeyRequired);
    expect(calls).toEqual(['settleAccess', 'settleAccess']);
  });

  it('Form B names an unknown verification: 404 before any merchant step (no merchant to act for: fails closed)', async () => {
    const { intake, calls } = setup();
    await expect(intake.admit({ kind: 'form-b', verificationId: 'ver_x', destinationAddress: MERCHANT }, undefined)).rejects.toBeInstanceOf(NotFoundError);
    expect(calls).toEqual(['findById']);
  });

  it("a repeat of a payment whose settlement already started is answered with it, even below the minimum now (its buyer paid)", async () => {
    const { intake, calls } = setup({ stored: verified(0n), live: true });
    await expect(intake.admit(formA(0n), undefined)).resolves.toMatchObject({ settlement: { id: 'stl_1' } });
    expect(calls).toEqual(['settleAccess', 'findLatestVerified', 'minimumFor', 'liveSettlementOf', 'start']);
  });

  it('Form B: protection and the minimum apply to the verified merchant', async () => {
    const { intake, calls } = setup({ access: 'denied', byId: verified(10_000n) });
    await expect(intake.admit({ kind: 'form-b', verificationId: 'ver_1', destinationAddress: MERCHANT }, undefined)).rejects.toBeInstanceOf(SettleKeyRequired);
    expect(calls).toEqual(['findById', 'settleAccess']);
  });

  it('the minimum in force now: below it no settlement starts, whatever was verified earlier', async () => {
    const { intake, calls } = setup({ stored: verified(0n) });
    const refusal = await intake.admit(formA(0n), undefined).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(SettleRefused);
    expect((refusal as SettleRefused).failure).toMatchObject({ reason: 'amount_below_minimum', message: 'amount below minimum' });
    expect(calls).toEqual(['settleAccess', 'findLatestVerified', 'minimumFor', 'liveSettlementOf']);
  });

  it("a merchant's own minimum replaces the default", async () => {
    const { intake, calls } = setup({ access: 'granted', ownMinimum: 0n, stored: verified(0n) });
    await expect(intake.admit(formA(0n), 'key')).resolves.toMatchObject({ settlement: { id: 'stl_1' } });
    expect(calls).toEqual(['settleAccess', 'findLatestVerified', 'minimumFor', 'start']);
  });

  it('Form A without a verification of this authorization: 404, nothing started', async () => {
    const { intake, calls } = setup({ stored: null });
    await expect(intake.admit(formA(10_000n), undefined)).rejects.toBeInstanceOf(NotFoundError);
    expect(calls).not.toContain('start');
  });

  it('x402 without a verification: checks the requirements and verifies here, then starts', async () => {
    const { intake, calls } = setup({ stored: null });
    await intake.admit(x402(10_000n), undefined);
    expect(calls).toEqual(['settleAccess', 'checkRequirements', 'findLatestVerified', 'verify', 'minimumFor', 'start']);
  });

  it('another signature over the same authorization is the same payment; other requirements or another authorization are not', async () => {
    const otherSignature = setup({ stored: { ...verified(10_000n), signature: '0x' + '5b'.repeat(65) } });
    await expect(otherSignature.intake.admit(formA(10_000n), undefined)).resolves.toMatchObject({ settlement: { id: 'stl_1' } });
    const otherRequirements = setup({ stored: { ...verified(10_000n), expectedAmount: '20000' } });
    await expect(otherRequirements.intake.admit(formA(10_000n), undefined)).rejects.toBeInstanceOf(NotFoundError);
    // a row of an older process (no fingerprint stored) is judged by its columns
    const older = setup({ stored: { ...verified(10_000n), authorizationFingerprint: null } });
    await expect(older.intake.admit(formA(10_000n), undefined)).resolves.toMatchObject({ settlement: { id: 'stl_1' } });
    const olderOther = setup({ stored: { ...verified(10_000n), authorizationFingerprint: null, validBefore: '1' } });
    await expect(olderOther.intake.admit(formA(10_000n), undefined)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("binds the payment's identifier once its verification is found, before the minimum and the start; another payment's id stops it", async () => {
    const withId = (): SettleCommand => ({ kind: 'form-a', payment: { ...payment(10_000n), paymentId: 'pay_0123456789abcdef' } });
    const bound = setup({ stored: verified(10_000n) });
    await expect(bound.intake.admit(withId(), undefined)).resolves.toMatchObject({ settlement: { id: 'stl_1' } });
    expect(bound.calls).toEqual(['settleAccess', 'findLatestVerified', 'bindPaymentId', 'minimumFor', 'start']);

    const taken = setup({ stored: verified(10_000n), boundTo: 'ff'.repeat(32) });
    await expect(taken.intake.admit(withId(), undefined)).rejects.toBeInstanceOf(PaymentIdentifierConflictError);
    expect(taken.calls).toEqual(['settleAccess', 'findLatestVerified', 'bindPaymentId']);

    // a payment without an identifier binds nothing
    const none = setup({ stored: verified(10_000n) });
    await none.intake.admit(formA(10_000n), undefined);
    expect(none.calls).not.toContain('bindPaymentId');
  });
});
