// The settle intake's steps in order, on stubs: nothing is looked up, verified, stored or enqueued for a
// request that an earlier step refuses.
import { NotFoundError } from '@facilitator/core';
import type { Settlement, Verification } from '@facilitator/db';
import type { Payment, X402Payment } from '@facilitator/verification';
import type { SettleCommand } from './settle-command';
import { SettleIntake, SettleKeyRequired, SettleRefused, type SettleIntakeDeps } from './settle-intake';

const MERCHANT = '0x' + 'aa'.repeat(20);
const PAYER = '0x' + '11'.repeat(20);

function payment(amount: bigint): Payment {
  return {
    protocolVersion: 2,
    surface: 'v1',
    network: { chainId: 84532, tokenAddress: '0x' + 'cc'.repeat(20) } as Payment['network'],
    networkName: 'eip155:84532',
    authorization: { from: PAYER, to: MERCHANT, value: amount, validAfter: 0n, validBefore: 2_000_000_000n, nonce: '0x' + '0c'.repeat(32) },
    signature: '0x' + '5a'.repeat(65),
    expected: { payTo: MERCHANT, amount },
    request: {},
  };
}

const verified = (amount: bigint) =>
  ({ id: 'ver_1', status: 'verified', merchant: MERCHANT, amount: amount.toString(), expectedAmount: amount.toString(), signature: '0x' + '5a'.repeat(65) }) as Verification;

function setup(options: { access?: 'open' | 'granted' | 'denied'; ownMinimum?: bigint; stored?: Verification | null; byId?: Verification | null } = {}) {
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
    requests: { start: async () => (calls.push('start'), { settlement: { id: 'stl_1' } as Settlement, created: true }) },
    minPaymentAmount: 10_000n,
  };
  return { intake: new SettleIntake(deps), calls };
}

const formA = (amount: bigint): SettleCommand => ({ kind: 'form-a', payment: payment(amount) });
const x402 = (amount: bigint): SettleCommand => ({ kind: 'x402', payment: payment(amount), x402: { x402Version: 2, payment: payment(amount) } as X402Payment });

describe('SettleIntake', () => {
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

  it('Form B: protection and the minimum apply to the verified merchant', async () => {
    const { intake, calls } = setup({ access: 'denied', byId: verified(10_000n) });
    await expect(intake.admit({ kind: 'form-b', verificationId: 'ver_1', destinationAddress: MERCHANT }, undefined)).rejects.toBeInstanceOf(SettleKeyRequired);
    expect(calls).toEqual(['findById', 'settleAccess']);
  });

  it('the minimum in force now: below it is refused before verification, whatever was verified earlier', async () => {
    const { intake, calls } = setup({ stored: verified(0n) });
    const refusal = await intake.admit(formA(0n), undefined).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(SettleRefused);
    expect((refusal as SettleRefused).failure).toMatchObject({ reason: 'amount_below_minimum', message: 'amount below minimum' });
    expect(calls).toEqual(['settleAccess', 'minimumFor']);
  });

  it("a merchant's own minimum replaces the default", async () => {
    const { intake, calls } = setup({ access: 'granted', ownMinimum: 0n, stored: verified(0n) });
    await expect(intake.admit(formA(0n), 'key')).resolves.toMatchObject({ settlement: { id: 'stl_1' } });
    expect(calls).toEqual(['settleAccess', 'minimumFor', 'findLatestVerified', 'start']);
  });

  it('Form A without a verification of this authorization: 404, nothing started', async () => {
    const { intake, calls } = setup({ stored: null });
    await expect(intake.admit(formA(10_000n), undefined)).rejects.toBeInstanceOf(NotFoundError);
    expect(calls).not.toContain('start');
  });

  it('x402 without a verification: checks the requirements and verifies here, then starts', async () => {
    const { intake, calls } = setup({ stored: null });
    await intake.admit(x402(10_000n), undefined);
    expect(calls).toEqual(['settleAccess', 'minimumFor', 'checkRequirements', 'findLatestVerified', 'verify', 'start']);
  });

  it('a stored verification of another signature or requirements is not this payment', async () => {
    const { intake } = setup({ stored: { ...verified(10_000n), signature: '0x' + '5b'.repeat(65) } });
    await expect(intake.admit(formA(10_000n), undefined)).rejects.toBeInstanceOf(NotFoundError);
  });
});
