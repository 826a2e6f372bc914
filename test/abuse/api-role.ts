// A connection as the API's own database role (npm run db:api-role): what a compromised API process can write.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { grantApiRole } from '@facilitator/db';
import type { TestStack } from '../support/test-stack';

/** A connection as a fresh API role of `stack`'s database, and how to drop the role afterwards. */
export async function asApiRole(stack: TestStack): Promise<{ client: Client; drop(): Promise<void> }> {
  const role = `facilitator_api_${randomBytes(4).toString('hex')}`;
  await grantApiRole(stack.db.url, { role });
  const roleUrl = new URL(stack.db.url);
  roleUrl.username = role;
  roleUrl.password = '';
  const client = new Client({ connectionString: roleUrl.toString() });
  await client.connect();
  return {
    client,
    drop: async () => {
      await client.end().catch(() => undefined);
      await stack.db.prisma.$executeRawUnsafe(`DROP OWNED BY ${role}`);
      await stack.db.prisma.$executeRawUnsafe(`DROP ROLE ${role}`);
    },
  };
}
