import { Wallet } from 'ethers';
import { isMerchantSignature, MerchantAction, merchantIdentityChainId, merchantRequestDigest } from './merchant-request';
import { signMerchantRequest } from './sign-merchant-request';

const NETWORK = { caip2: 'eip155:84532', chainId: 84532 };
const TREASURY = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

describe('merchant requests (EIP-712)', () => {
  const merchant = Wallet.createRandom();

  async function signed(parameters: Record<string, unknown> = {}) {
    const proof = await signMerchantRequest(merchant, { action: MerchantAction.SetMinimum, merchant: merchant.address, parameters, network: NETWORK, treasury: TREASURY });
    const fields = { action: MerchantAction.SetMinimum, merchant: merchant.address, parameters, nonce: proof.nonce, expiresAt: proof.expires_at, chainId: NETWORK.chainId, treasury: TREASURY };
    return { proof, fields };
  }

  it("an EOA's signature is recovered locally (no chain needed)", async () => {
    const { proof, fields } = await signed({ minimum: '0' });
    expect(await isMerchantSignature(fields, proof.signature, undefined)).toBe(true);
  });

  it('binds the action, the merchant, the parameters, the nonce, the expiry, the chain and the deployment (treasury)', async () => {
    const { proof, fields } = await signed({ minimum: '0' });
    const variants = [
      { ...fields, action: MerchantAction.EnableSettleProtection },
      { ...fields, merchant: Wallet.createRandom().address },
      { ...fields, parameters: { minimum: '1' } },
      { ...fields, nonce: `0x${'00'.repeat(32)}` },
      { ...fields, expiresAt: fields.expiresAt + 1 },
      { ...fields, chainId: 8453 },
      // another deployment of the service: another treasury
      { ...fields, treasury: Wallet.createRandom().address },
    ];
    for (const variant of variants) {
      expect(merchantRequestDigest(variant)).not.toBe(merchantRequestDigest(fields));
      expect(await isMerchantSignature(variant, proof.signature, undefined)).toBe(false);
    }
  });

  it('parameters are signed as canonical JSON: key order does not matter', () => {
    const base = { action: MerchantAction.SetMinimum, merchant: merchant.address, nonce: `0x${'11'.repeat(32)}`, expiresAt: 1, chainId: 1, treasury: TREASURY };
    expect(merchantRequestDigest({ ...base, parameters: { a: 1, b: 2 } })).toBe(merchantRequestDigest({ ...base, parameters: { b: 2, a: 1 } }));
  });

  it('garbage is not a signature', async () => {
    const { fields } = await signed();
    expect(await isMerchantSignature(fields, '0x1234', undefined)).toBe(false);
    expect(await isMerchantSignature(fields, `0x${'ff'.repeat(65)}`, undefined)).toBe(false);
  });

  it('the identity chain is fixed by the deployment: Base mainnet when enabled, else the lowest chain id', () => {
    expect(merchantIdentityChainId([84532, 8453])).toBe(8453);
    expect(merchantIdentityChainId([84532])).toBe(84532);
    expect(merchantIdentityChainId([84532, 10])).toBe(10);
    expect(() => merchantIdentityChainId([])).toThrow('no network');
  });
});
