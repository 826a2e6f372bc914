import { Wallet, type BaseWallet, type Provider } from 'ethers';
import type { MerchantRepository, StoredWebhookSecret } from '@facilitator/db';
import { MerchantAction } from './merchant-request';
import { MerchantService } from './merchant-service';
import { SecretBox } from './secret-box';
import { signMerchantRequest } from './sign-merchant-request';

const BINDING = { chainId: 84532, treasury: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' };

const MERCHANT = '0x209693bc6afc0c5328ba36faf03c514ef312287c';

/** The repository's secret rows in memory, with the database's rule for which are live. */
function fakeRepository() {
  const rows: Array<{ ciphertext: string; createdAt: Date; retiresAt: Date | null }> = [];
  let clock = 1_000;
  const tick = () => new Date(clock++);
  const repository = {
    async liveSecrets(): Promise<StoredWebhookSecret[]> {
      const now = clock;
      return rows
        .filter((r) => r.retiresAt === null || r.retiresAt.getTime() > now)
        .sort((a, b) => Number(b.retiresAt === null) - Number(a.retiresAt === null) || b.createdAt.getTime() - a.createdAt.getTime());
    },
    async insertSecretIfAbsent(_m: string, ciphertext: string) {
      if (!rows.some((r) => r.retiresAt === null)) rows.push({ ciphertext, createdAt: tick(), retiresAt: null });
    },
    async useNonce() {
      return true;
    },
    // a signed request marks its merchant seen (retention keeps merchants that act)
    async markSeen() {},
    async rotateSecret(_m: string, ciphertext: string, graceSeconds: number) {
      const now = clock;
      for (const r of rows) if (r.retiresAt !== null && r.retiresAt.getTime() > now) r.retiresAt = new Date(now);
      for (const r of rows) if (r.retiresAt === null) r.retiresAt = new Date(now + graceSeconds * 1000);
      rows.push({ ciphertext, createdAt: tick(), retiresAt: null });
    },
  };
  return { repository: repository as unknown as MerchantRepository, rows };
}

function service(graceSeconds = 86_400, providerFor?: (chainId: number) => Provider | undefined) {
  const { repository, rows } = fakeRepository();
  const merchants = new MerchantService({
    repository,
    secretBox: new SecretBox('a-master-secret-of-at-least-32-characters'),
    graceSeconds,
    feeAmount: 10_000n,
    binding: BINDING,
    providerFor,
  });
  return { merchants, rows };
}

describe('merchant requests are bound to the deployment', () => {
  const owner = Wallet.createRandom();
  const request = async (network: { caip2: string; chainId: number }, treasury: string, merchant = owner.address, signer: BaseWallet = owner) => {
    const proof = await signMerchantRequest(signer, { action: MerchantAction.GetWebhookSecret, merchant, network, treasury });
    return { merchant: merchant.toLowerCase(), action: MerchantAction.GetWebhookSecret, parameters: {}, chainId: network.chainId, nonce: proof.nonce, expiresAt: proof.expires_at, signature: proof.signature };
  };

  it('accepts a request signed for this deployment, refuses one signed for another (another treasury)', async () => {
    const { merchants } = service();
    await expect(merchants.authenticate(await request({ caip2: 'eip155:84532', chainId: 84532 }, BINDING.treasury))).resolves.toBeUndefined();
    const elsewhere = await request({ caip2: 'eip155:84532', chainId: 84532 }, Wallet.createRandom().address);
    await expect(merchants.authenticate(elsewhere)).rejects.toThrow(`the request is not signed by ${owner.address.toLowerCase()}`);
  });

  it('a contract merchant proves control on the identity chain only, whichever chain the requester names', async () => {
    // the same address on two chains: on 8453 a wallet the attacker controls says yes to anything; on the
    // identity chain (84532) the merchant's own wallet says no to the attacker
    const asked: number[] = [];
    const wallet = (chainId: number, valid: boolean) =>
      ({
        getCode: async () => (asked.push(chainId), '0x6080'),
        call: async () => (valid ? `0x1626ba7e${'00'.repeat(28)}` : `0x${'00'.repeat(32)}`),
      }) as unknown as Provider;
    const providers = new Map([
      [8453, wallet(8453, true)],
      [84532, wallet(84532, false)],
    ]);
    const { merchants } = service(86_400, (chainId) => providers.get(chainId));
    const contractMerchant = Wallet.createRandom().address;
    const attacker = Wallet.createRandom();
    const onAttackersChain = await request({ caip2: 'eip155:8453', chainId: 8453 }, BINDING.treasury, contractMerchant, attacker);
    await expect(merchants.authenticate(onAttackersChain)).rejects.toThrow('merchant requests to this service are signed for eip155:84532, not eip155:8453');
    const onIdentityChain = await request({ caip2: 'eip155:84532', chainId: 84532 }, BINDING.treasury, contractMerchant, attacker);
    await expect(merchants.authenticate(onIdentityChain)).rejects.toThrow('is not signed by');
    expect(asked).toEqual([84532]);
  });
});

describe('signing secrets across a rotation', () => {
  it('the delivery right after a rotation is signed with the new secret (no cached old one alone)', async () => {
    const { merchants } = service();
    const [old] = await merchants.signingSecrets(MERCHANT);
    // a burst of deliveries signed with it (the decryption is remembered, the live rows are read each time)
    for (let i = 0; i < 3; i++) expect(await merchants.signingSecrets(MERCHANT)).toEqual([old]);
    const rotated = await merchants.rotateWebhookSecret(MERCHANT);
    expect(rotated.current).not.toBe(old);
    expect(await merchants.signingSecrets(MERCHANT)).toEqual([rotated.current, old]);
  });

  it('grace_seconds 0 retires the old secret at once; a longer grace than configured is not granted', async () => {
    const { merchants, rows } = service(3_600);
    const [old] = await merchants.signingSecrets(MERCHANT);
    const rotated = await merchants.rotateWebhookSecret(MERCHANT, 0);
    expect(rotated.previous).toBeUndefined();
    expect(await merchants.signingSecrets(MERCHANT)).toEqual([rotated.current]);
    expect(await merchants.signingSecrets(MERCHANT)).not.toContain(old);
    await merchants.rotateWebhookSecret(MERCHANT, 999_999);
    // the configured hour, not the 11 days asked for
    expect(rows[1].retiresAt!.getTime() - rows[2].createdAt.getTime()).toBe(3_600_000);
  });

  it('a second rotation with grace 0 cuts the first one’s grace short (a leaked old secret stops signing)', async () => {
    const { merchants } = service();
    const [leaked] = await merchants.signingSecrets(MERCHANT);
    const first = await merchants.rotateWebhookSecret(MERCHANT);
    expect(first.previous?.secret).toBe(leaked);
    const second = await merchants.rotateWebhookSecret(MERCHANT, 0);
    const signing = await merchants.signingSecrets(MERCHANT);
    expect(signing).toEqual([second.current]);
    expect(signing).not.toContain(leaked);
  });
});
