import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { Prisma, SettlementState, VerificationStatus } from './generated/prisma/client';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

const PAYER = '0x1111111111111111111111111111111111111111';
const MERCHANT = '0x2222222222222222222222222222222222222222';
const USDC = '0x833589fcd6e4b24b4be8d3bb2a5ec2a7c3b7a8b0';

async function createVerification(id: string) {
  return db.prisma.verification.create({
    data: {
      id,
      status: VerificationStatus.verified,
      protocolVersion: 2,
      surface: 'x402',
      chainId: 8453,
      network: 'eip155:8453',
      networkName: 'eip155:8453',
      tokenAddress: USDC,
      payer: PAYER,
      merchant: MERCHANT,
      amount: '1000000',
      nonce: `0x${id.padStart(64, '0')}`,
      request: { paymentPayload: { x402Version: 2 }, paymentRequirements: { amount: '1000000' } },
    },
  });
}

function settlementFor(verificationId: string, id: string, paymentKey: string | null) {
  return db.prisma.settlement.create({
    data: {
      id,
      verificationId,
      paymentKey,
      surface: 'x402',
      chainId: 8453,
      network: 'eip155:8453',
      tokenAddress: USDC,
      nonceSpace: USDC,
      payer: PAYER,
      merchant: MERCHANT,
      amount: '1000000',
      nonce: '0x01',
      feeAmount: '10000',
    },
  });
}

describe('createPrismaClient', () => {
  it('stores a verification and its settlement and reads them back', async () => {
    await createVerification('ver1');
    await settlementFor('ver1', 'set1', `8453:${USDC}:${PAYER}:0x01`);

    const settlement = await db.prisma.settlement.findUniqueOrThrow({
      where: { id: 'set1' },
      include: { verification: true },
    });

    expect(settlement).toMatchObject({
      state: SettlementState.pending,
      merchantPaid: false,
      feeAmount: '10000',
      paymentKey: `8453:${USDC}:${PAYER}:0x01`,
      verification: {
        status: VerificationStatus.verified,
        request: { paymentPayload: { x402Version: 2 }, paymentRequirements: { amount: '1000000' } },
        metadata: null,
      },
    });
    expect(settlement.createdAt).toBeInstanceOf(Date);
    expect(settlement.updatedAt).toBeInstanceOf(Date);
  });

  it('round-trips bigint columns', async () => {
    const nonce = 2n ** 60n + 1n;
    await db.prisma.signerNonce.create({ data: { chainId: 8453, address: MERCHANT, nextNonce: nonce } });

    const stored = await db.prisma.signerNonce.findUniqueOrThrow({
      where: { chainId_address: { chainId: 8453, address: MERCHANT } },
    });
    expect(stored.nextNonce).toBe(nonce);
  });

  it('allows any number of settlements without a payment key but only one per key', async () => {
    await createVerification('ver2');
    await settlementFor('ver2', 'set-without-key-1', null);
    await settlementFor('ver2', 'set-without-key-2', null);
    await settlementFor('ver2', 'set-live', 'payment-key-2');

    const duplicate = settlementFor('ver2', 'set-duplicate', 'payment-key-2');

    await expect(duplicate).rejects.toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
    await expect(duplicate).rejects.toMatchObject({ code: 'P2002' });
    expect(await db.prisma.settlement.count({ where: { verificationId: 'ver2' } })).toBe(3);
  });
});
