import { Prisma } from '../generated/prisma/client';
import type { PrismaClient, Settlement, SettlementState, Verification } from '../generated/prisma/client';

export type SettlementRow = Settlement;
export type SettlementWithVerificationRow = Settlement & { verification: Verification };

export interface TransitionRequest {
  id: string;
  from: SettlementState;
  to: SettlementState;
  data?: Omit<Prisma.SettlementUncheckedUpdateInput, 'state'>;
  note?: Record<string, unknown>;
  /** more writes that must commit with the transition (e.g. a webhook event row) */
  alongside?: (tx: Prisma.TransactionClient) => Promise<void>;
}

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
}

/** States in which the payer's authorization is spent or about to be: its nonce may not be verified again. */
export const NONCE_CONSUMING_STATES = ['fee_collected', 'executing', 'settled'] as const;

export class SettlementRepository {
  constructor(private readonly prisma: PrismaClient) {}

  findById(id: string): Promise<SettlementRow | null> {
    return this.prisma.settlement.findUnique({ where: { id } });
  }

  /** A settlement of ours that used (or is using) this payment's nonce, if any. */
  findNonceUse(chainId: number, tokenAddress: string, payer: string, nonce: string): Promise<SettlementRow | null> {
    return this.prisma.settlement.findFirst({
      where: {
        chainId,
        tokenAddress,
        payer,
        nonce,
        OR: [{ state: { in: [...NONCE_CONSUMING_STATES] } }, { merchantPaid: true }],
      },
    });
  }

  findSettledForVerification(verificationId: string): Promise<SettlementRow | null> {
    return this.prisma.settlement.findFirst({ where: { verificationId, state: 'settled' } });
  }

  findWithVerification(id: string): Promise<SettlementWithVerificationRow | null> {
    return this.prisma.settlement.findUnique({ where: { id }, include: { verification: true } });
  }

  findByPaymentKey(paymentKey: string): Promise<SettlementRow | null> {
    return this.prisma.settlement.findUnique({ where: { paymentKey } });
  }

  /**
   * The settlement that owns this payment: the live one if there is one, else a new one. The unique
   * payment key makes this safe under any concurrency: exactly one insert wins, the rest read it.
   */
  async createOrGetForPayment(data: Prisma.SettlementUncheckedCreateInput & { paymentKey: string }): Promise<{ settlement: SettlementRow; created: boolean }> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = await this.findByPaymentKey(data.paymentKey);
      if (existing) return { settlement: existing, created: false };
      try {
        const settlement = await this.prisma.$transaction(async (tx) => {
          const created = await tx.settlement.create({ data });
          await tx.settlementTransition.create({ data: { settlementId: created.id, fromState: null, toState: created.state } });
          return created;
        });
        return { settlement, created: true };
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
    }
    throw new Error(`could not create or find the settlement of payment ${data.paymentKey}`);
  }

  /**
   * Moves a settlement from one state to the next, with its history row, atomically and only if it is
   * still in `from` (so two workers can never both advance it). Returns false when it had moved on.
   */
  async transition(request: TransitionRequest): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.settlement.updateMany({
        where: { id: request.id, state: request.from },
        data: { ...(request.data as Prisma.SettlementUncheckedUpdateManyInput), state: request.to },
      });
      if (count === 0) return false;
      await tx.settlementTransition.create({
        data: { settlementId: request.id, fromState: request.from, toState: request.to, note: request.note as object | undefined },
      });
      await request.alongside?.(tx);
      return true;
    });
  }

  transitionsOf(settlementId: string) {
    return this.prisma.settlementTransition.findMany({ where: { settlementId }, orderBy: { id: 'asc' } });
  }

  /** Settlements that are not final and have not moved for a while: their jobs may be lost. */
  findStale(olderThan: Date, limit: number): Promise<SettlementRow[]> {
    return this.prisma.settlement.findMany({
      where: { state: { notIn: ['settled', 'failed'] }, updatedAt: { lt: olderThan } },
      orderBy: { updatedAt: 'asc' },
      take: limit,
    });
  }
}
