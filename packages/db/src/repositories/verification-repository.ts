import type { PrismaClient, Verification } from '../generated/prisma/client';
import type { Prisma } from '../generated/prisma/client';

export type VerificationRow = Verification;
export type NewVerification = Prisma.VerificationUncheckedCreateInput;

export class VerificationRepository {
  constructor(private readonly prisma: PrismaClient) {}

  create(data: NewVerification): Promise<VerificationRow> {
    return this.prisma.verification.create({ data });
  }

  findById(id: string): Promise<VerificationRow | null> {
    return this.prisma.verification.findUnique({ where: { id } });
  }

  /** The newest successful verification of one payment: what a Form A settle refers to. */
  findLatestVerified(chainId: number, tokenAddress: string, payer: string, nonce: string): Promise<VerificationRow | null> {
    return this.prisma.verification.findFirst({
      where: { chainId, tokenAddress, payer, nonce, status: 'verified' },
      orderBy: { createdAt: 'desc' },
    });
  }
}
