export { createPrismaClient, type CreatePrismaClientOptions } from './prisma-client';
export { createPgPool, type Pool } from './pg-pool';
export { applyMigrations, findMigrationsDir, type ApplyMigrationsOptions } from './migrations';
// The generated client's models, enums and `Prisma` namespace, so no other package reaches into `generated/`.
export * from './generated/prisma/client';
export * from './repositories';
