import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client';

interface CreatePrismaClientOptions {
  /** Most connections the pool opens; pg's default (10) when omitted. */
  poolMax?: number;
}

/** A Prisma client over a `pg` pool: Prisma 7 talks to Postgres only through a driver adapter. */
export function createPrismaClient(databaseUrl: string, options: CreatePrismaClientOptions = {}): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.poolMax });
  return new PrismaClient({ adapter });
}
