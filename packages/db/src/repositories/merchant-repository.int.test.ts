// Round trip of MerchantRepository against a real, migrated Postgres: merchants' records, webhook secrets
// and request nonces written through the repository and read back through it.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { MerchantRepository } from './merchant-repository';

let db: TestDatabase;
let repo: MerchantRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new MerchantRepository(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

const address = () => `0x${randomBytes(20).toString('hex')}`;
const keyHash = () => randomBytes(32).toString('hex');
const TWO_POW_255 = (2n ** 255n).toString();
const HOUR = 3_600;

describe('MerchantRepository', () => {
  describe('records', () => {
    it('has no record of a merchant that never asked for anything', async () => {
      expect(await repo.find(address())).toBeNull();
      expect(await repo.findBySettleKeyHash(keyHash())).toBeNull();
    });

    it('turns settle protection on, finds the merchant by address and by key hash, and replaces the key', async () => {
      const merchant = address();
      const first = keyHash();
      expect(await repo.setSettleKeyHash(merchant, first)).toStrictEqual({ address: merchant, settleKeyHash: first, minimumAmount: null });
      expect(await repo.find(merchant)).toStrictEqual({ address: merchant, settleKeyHash: first, minimumAmount: null });
      expect(await repo.findBySettleKeyHash(first)).toStrictEqual({ address: merchant, settleKeyHash: first, minimumAmount: null });

      const second = keyHash();
      expect(await repo.setSettleKeyHash(merchant, second)).toStrictEqual({ address: merchant, settleKeyHash: second, minimumAmount: null });
      expect(await repo.findBySettleKeyHash(first)).toBeNull();
      expect((await repo.findBySettleKeyHash(second))!.address).toBe(merchant);
    });

    it('refuses one key hash for two merchants, with an error tagged as the database’s', async () => {
      const hash = keyHash();
      await repo.setSettleKeyHash(address(), hash);
      await expect(repo.setSettleKeyHash(address(), hash)).rejects.toMatchObject({ code: '23505', dependency: 'database' });
    });

    it('sets a minimum without protection, creating the record, and keeps a 2^255 minimum exactly', async () => {
      const merchant = address();
      expect(await repo.setMinimum(merchant, '2500', false)).toStrictEqual({ address: merchant, settleKeyHash: null, minimumAmount: '2500' });
      expect(await repo.setMinimum(merchant, TWO_POW_255, false)).toStrictEqual({ address: merchant, settleKeyHash: null, minimumAmount: TWO_POW_255 });
      expect(await repo.find(merchant)).toStrictEqual({ address: merchant, settleKeyHash: null, minimumAmount: TWO_POW_255 });
    });

    it('with needsProtection, sets the minimum only while settle protection is on', async () => {
      const unknown = address();
      expect(await repo.setMinimum(unknown, '10', true)).toBeNull();
      expect(await repo.find(unknown)).toBeNull();

      const unprotected = address();
      await repo.setMinimum(unprotected, '5', false);
      expect(await repo.setMinimum(unprotected, '10', true)).toBeNull();
      expect((await repo.find(unprotected))!.minimumAmount).toBe('5');

      const protectedMerchant = address();
      const hash = keyHash();
      await repo.setSettleKeyHash(protectedMerchant, hash);
      expect(await repo.setMinimum(protectedMerchant, '10', true)).toStrictEqual({ address: protectedMerchant, settleKeyHash: hash, minimumAmount: '10' });

      await repo.clearSettleKey(protectedMerchant);
      expect(await repo.setMinimum(protectedMerchant, '20', true)).toBeNull();
    });

    it('turning protection off clears the key and the merchant’s own minimum, and works for a new merchant too', async () => {
      const merchant = address();
      const hash = keyHash();
      await repo.setSettleKeyHash(merchant, hash);
      await repo.setMinimum(merchant, '777', true);

      expect(await repo.clearSettleKey(merchant)).toStrictEqual({ address: merchant, settleKeyHash: null, minimumAmount: null });
      expect(await repo.find(merchant)).toStrictEqual({ address: merchant, settleKeyHash: null, minimumAmount: null });
      expect(await repo.findBySettleKeyHash(hash)).toBeNull();

      const fresh = address();
      expect(await repo.clearSettleKey(fresh)).toStrictEqual({ address: fresh, settleKeyHash: null, minimumAmount: null });
      // nothing to turn off, nothing kept (issue 40, 7d)
      expect(await repo.find(fresh)).toBeNull();
    });

    it('a signed request of a merchant we hold nothing of stores no record; one of a merchant with a secret or a record is seen (issue 40, 7d)', async () => {
      const stranger = address();
      await repo.markSeen(stranger);
      expect(await repo.find(stranger)).toBeNull();
      const waiting = address();
      await repo.insertSecretIfAbsent(waiting, 'ciphertext');
      await repo.markSeen(waiting);
      expect(await repo.find(waiting)).not.toBeNull();
      const known = address();
      await repo.setSettleKeyHash(known, keyHash());
      await repo.markSeen(known);
      const [row] = (await db.pool.query('SELECT last_seen_at FROM merchants WHERE address = $1', [known])).rows;
      expect(row.last_seen_at).not.toBeNull();
    });
  });

  describe('webhook secrets', () => {
    it('has no secret for a new merchant, stores the first one once, and ignores a second first', async () => {
      const merchant = address();
      expect(await repo.liveSecrets(merchant)).toEqual([]);

      const before = Date.now();
      await repo.insertSecretIfAbsent(merchant, 'cipher-1');
      await repo.insertSecretIfAbsent(merchant, 'cipher-other');

      const secrets = await repo.liveSecrets(merchant);
      expect(secrets).toStrictEqual([{ ciphertext: 'cipher-1', createdAt: expect.any(Date), retiresAt: null }]);
      expect(Math.abs(secrets[0].createdAt.getTime() - before)).toBeLessThan(5_000);
      expect(await repo.liveSecrets(address())).toEqual([]);
    });

    it('lets concurrent first uses store exactly one secret', async () => {
      const merchant = address();
      await Promise.all(Array.from({ length: 6 }, (_, i) => repo.insertSecretIfAbsent(merchant, `cipher-${i}`)));
      expect(await repo.liveSecrets(merchant)).toHaveLength(1);
    });

    it('rotation keeps the previous secret for its grace period and retires any older one at once', async () => {
      const merchant = address();
      await repo.insertSecretIfAbsent(merchant, 'c1');

      const beforeRotation = Date.now();
      await repo.rotateSecret(merchant, 'c2', HOUR);
      const afterOne = await repo.liveSecrets(merchant);
      expect(afterOne.map((s) => s.ciphertext)).toEqual(['c2', 'c1']);
      expect(afterOne[0].retiresAt).toBeNull();
      expect(afterOne[1].retiresAt).toBeInstanceOf(Date);
      const grace = afterOne[1].retiresAt!.getTime() - beforeRotation;
      expect(grace).toBeGreaterThan(HOUR * 1_000 - 5_000);
      expect(grace).toBeLessThan(HOUR * 1_000 + 5_000);

      await repo.rotateSecret(merchant, 'c3', HOUR);
      await sleep(5);
      const afterTwo = await repo.liveSecrets(merchant);
      expect(afterTwo.map((s) => s.ciphertext)).toEqual(['c3', 'c2']);
      expect(afterTwo[1].retiresAt!.getTime()).toBeGreaterThan(Date.now() + HOUR * 1_000 - 5_000);
    });

    it('rotation with no grace leaves only the new secret live', async () => {
      const merchant = address();
      await repo.insertSecretIfAbsent(merchant, 'old');
      await repo.rotateSecret(merchant, 'new', 0);
      await sleep(5);
      expect(await repo.liveSecrets(merchant)).toStrictEqual([{ ciphertext: 'new', createdAt: expect.any(Date), retiresAt: null }]);
    });

    it('rotation of a merchant with no secret yet stores the new one as current', async () => {
      const merchant = address();
      await repo.rotateSecret(merchant, 'first', HOUR);
      expect((await repo.liveSecrets(merchant)).map((s) => [s.ciphertext, s.retiresAt])).toEqual([['first', null]]);
    });

    it('concurrent rotations run one after the other: one current secret, two live at most', async () => {
      const merchant = address();
      await repo.insertSecretIfAbsent(merchant, 'c0');
      await Promise.all(Array.from({ length: 4 }, (_, i) => repo.rotateSecret(merchant, `r${i}`, HOUR)));
      await sleep(5);

      const live = await repo.liveSecrets(merchant);
      expect(live).toHaveLength(2);
      expect(live.filter((s) => s.retiresAt === null)).toHaveLength(1);
      expect(live[0].retiresAt).toBeNull();
    });
  });

  describe('request nonces', () => {
    it('accepts a nonce once per merchant and refuses its replay', async () => {
      const merchant = address();
      const expiresAt = new Date(Date.now() + 60_000);
      expect(await repo.useNonce(merchant, 'n-1', expiresAt)).toBe(true);
      expect(await repo.useNonce(merchant, 'n-1', expiresAt)).toBe(false);
      expect(await repo.useNonce(merchant, 'n-2', expiresAt)).toBe(true);
      expect(await repo.useNonce(address(), 'n-1', expiresAt)).toBe(true);
    });

    it('accepts exactly one of concurrent uses of a nonce', async () => {
      const merchant = address();
      const expiresAt = new Date(Date.now() + 60_000);
      const results = await Promise.all(Array.from({ length: 8 }, () => repo.useNonce(merchant, 'race', expiresAt)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('sweeps a nonce once it expired, and keeps refusing it until then', async () => {
      const merchant = address();
      expect(await repo.useNonce(merchant, 'short', new Date(Date.now() + 300))).toBe(true);
      expect(await repo.useNonce(merchant, 'short', new Date(Date.now() + 300))).toBe(false);
      await sleep(400);
      expect(await repo.useNonce(merchant, 'short', new Date(Date.now() + 60_000))).toBe(true);
      const { rows } = await db.pool.query('SELECT expires_at FROM merchant_request_nonces WHERE merchant = $1', [merchant]);
      expect(rows).toHaveLength(1);
      expect((rows[0].expires_at as Date).getTime()).toBeGreaterThan(Date.now() + 50_000);
    });
  });
});
