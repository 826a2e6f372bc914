import type { PrismaClient, Settlement } from '../generated/prisma/client';

export type SettlementRow = Settlement;

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
}
