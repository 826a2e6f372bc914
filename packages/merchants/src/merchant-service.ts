import { timingSafeEqual } from 'node:crypto';
import type { Provider } from 'ethers';
import { InvalidRequestError, SharedReadings, UnauthorizedError } from '@facilitator/core';
import type { MerchantRecord, MerchantRepository } from '@facilitator/db';
import { isMerchantSignature, MAX_REQUEST_LIFETIME_SECONDS, type MerchantAction, type MerchantRequestBinding } from './merchant-request';
import { newSettleKey, newWebhookSecret, settleKeyHash } from './random-secrets';
import { OpenedSecrets } from './opened-secrets';
import type { SecretBox } from './secret-box';

interface MerchantServiceOptions {
  repository: MerchantRepository;
  secretBox: SecretBox;
  /** how long a rotated webhook secret keeps signing beside the new one */
  graceSeconds: number;
  /** the flat fee: a minimum below it needs settle protection */
  feeAmount: bigint;
  /** the deployment's binding: its treasury and the one chain where contract merchants prove control (without it, no signed request is accepted) */
  binding?: MerchantRequestBinding;
  /** reads that chain, for a contract merchant's ERC-1271 check */
  providerFor?(chainId: number): Provider | undefined;
  now?(): number;
}

/** A request a merchant signed with its payTo address's key (see merchant-request.ts). */
interface SignedMerchantRequest {
  /** lowercase */
  merchant: string;
  action: MerchantAction;
  parameters: Record<string, unknown>;
  /** the chain the proof names (`proof.network`): must be the deployment's identity chain */
  chainId: number;
  nonce: string;
  expiresAt: number;
  signature: string;
}

interface MerchantWebhookSecrets {
  current: string;
  /** the secret before the last rotation, while it still signs */
  previous?: { secret: string; retiresAt: Date };
}

/** Whether a settle request may go on for a merchant: no protection, the right key, or neither. */
type SettleAccess = 'open' | 'granted' | 'denied';

/**
 * Merchant identity without accounts: the payTo address is the merchant, and it proves control by
 * signing. Holds the merchant's webhook secrets (created on first use, encrypted at rest, rotated with
 * a grace period), its settle protection (a key stored hashed) and its own minimum payment.
 */
/** How long a merchant's minimum is reused by verifications. */
const MINIMUM_READING_MS = 1_000;

export class MerchantService {
  private readonly minimums = new SharedReadings<string, bigint | undefined>({ maxEntries: 10_000 });
  private readonly opened: OpenedSecrets;

  constructor(private readonly options: MerchantServiceOptions) {
    this.opened = new OpenedSecrets(options.secretBox);
  }

  private now(): number {
    return this.options.now?.() ?? Math.floor(Date.now() / 1000);
  }

  /**
   * Accepts a signed request once: not expired, not too far ahead, signed by the merchant (ECDSA or
   * ERC-1271), and its nonce never seen before. Throws 401 otherwise (400 for an over-long expiry).
   */
  async authenticate(request: SignedMerchantRequest): Promise<void> {
    const now = this.now();
    if (request.expiresAt <= now) throw new UnauthorizedError(`the signed request expired at ${request.expiresAt} (now ${now}); sign a new one`);
    if (request.expiresAt > now + MAX_REQUEST_LIFETIME_SECONDS) {
      throw new InvalidRequestError(`expires_at may be at most ${MAX_REQUEST_LIFETIME_SECONDS} s ahead`, {
        errors: [{ path: '/proof/expires_at', message: `must be at most ${now + MAX_REQUEST_LIFETIME_SECONDS}` }],
      });
    }
    const { binding } = this.options;
    if (!binding) throw new UnauthorizedError('this process accepts no signed merchant requests (no deployment binding)');
    if (request.chainId !== binding.chainId) {
      // a contract wallet at one address may answer to other owners on another chain: the deployment fixes the chain
      throw new UnauthorizedError(`merchant requests to this service are signed for eip155:${binding.chainId}, not eip155:${request.chainId} (see GET /v1/merchants/request-domain)`);
    }
    const provider = this.options.providerFor?.(binding.chainId);
    if (!(await isMerchantSignature({ ...request, chainId: binding.chainId, treasury: binding.treasury }, request.signature, provider))) {
      throw new UnauthorizedError(`the request is not signed by ${request.merchant} (EIP-712 MerchantRequest, action ${request.action})`);
    }
    if (!(await this.options.repository.useNonce(request.merchant, request.nonce.toLowerCase(), new Date(request.expiresAt * 1000)))) {
      throw new UnauthorizedError('this signed request was used already; sign a new one with a fresh nonce');
    }
    // the merchant itself is here: retention keeps what it has (e.g. the webhook secret it reads) a while longer
    await this.options.repository.markSeen(request.merchant);
  }

  /** The merchant's secrets, the current one created on first use. */
  async webhookSecrets(merchant: string): Promise<MerchantWebhookSecrets> {
    let live = await this.options.repository.liveSecrets(merchant);
    if (live.length === 0 || live[0].retiresAt !== null) {
      await this.options.repository.insertSecretIfAbsent(merchant, this.options.secretBox.seal(newWebhookSecret(), merchant));
      live = await this.options.repository.liveSecrets(merchant);
    }
    const [current, previous] = live.map((s) => ({ secret: this.opened.open(s.ciphertext, merchant), retiresAt: s.retiresAt }));
    return { current: current.secret, ...(previous?.retiresAt ? { previous: { secret: previous.secret, retiresAt: previous.retiresAt } } : {}) };
  }

  /**
   * The secrets that sign a delivery now, the current one first. Read for every delivery (one indexed read;
   * only the decryption is remembered, by ciphertext), so the delivery after a rotation is signed with the
   * new secret: a receiver that switched at once never sees the old one alone. A retired secret is not
   * read: the database decides retirement with its own clock.
   */
  async signingSecrets(merchant: string): Promise<string[]> {
    const secrets = await this.webhookSecrets(merchant);
    return secrets.previous ? [secrets.current, secrets.previous.secret] : [secrets.current];
  }

  /**
   * A new current secret. The old one keeps signing for `graceSeconds` (the configured grace, or less when
   * asked: 0 retires it at once, e.g. after a leak; a rotation also retires at once any secret still in
   * an earlier grace period).
   */
  async rotateWebhookSecret(merchant: string, graceSeconds?: number): Promise<MerchantWebhookSecrets> {
    const grace = Math.min(graceSeconds ?? this.options.graceSeconds, this.options.graceSeconds);
    await this.webhookSecrets(merchant);
    await this.options.repository.rotateSecret(merchant, this.options.secretBox.seal(newWebhookSecret(), merchant), grace);
    return this.webhookSecrets(merchant);
  }

  /** Turns settle protection on; returns the new key, which is never shown again. */
  async enableSettleProtection(merchant: string): Promise<string> {
    const key = newSettleKey();
    await this.options.repository.setSettleKeyHash(merchant, settleKeyHash(key));
    return key;
  }

  /** Turns settle protection off, which also restores the default minimum. */
  async disableSettleProtection(merchant: string): Promise<MerchantRecord> {
    const record = await this.options.repository.clearSettleKey(merchant);
    this.minimums.forget(merchant.toLowerCase());
    return record;
  }

  /** Sets the merchant's own minimum; below the fee only with settle protection on. */
  async setMinimum(merchant: string, minimum: bigint): Promise<MerchantRecord> {
    const belowFee = minimum < this.options.feeAmount;
    const record = await this.options.repository.setMinimum(merchant, minimum.toString(), belowFee);
    this.minimums.forget(merchant.toLowerCase());
    if (!record) {
      throw new InvalidRequestError(
        `a minimum below the fee (${this.options.feeAmount}) needs settle protection: turn it on first (POST /v1/merchants/${merchant}/settle-key)`,
        { reason: 'settle_protection_required', fee: this.options.feeAmount.toString(), minimum: minimum.toString() },
      );
    }
    return record;
  }

  /**
   * The merchant's own minimum payment; undefined: the service default applies. Read at most once a second
   * per merchant and process (every verification asks; a change made in another API process takes effect
   * here within the second), bounded in the merchants it remembers, since strangers choose the payTo.
   */
  async minimumFor(merchant: string): Promise<bigint | undefined> {
    const key = merchant.toLowerCase();
    return this.minimums.get(key, MINIMUM_READING_MS, async () => {
      const record = await this.options.repository.find(key);
      return record?.minimumAmount == null ? undefined : BigInt(record.minimumAmount);
    });
  }

  /** Whether a settle for `merchant` may proceed with the presented bearer key (if any). */
  async settleAccess(merchant: string, presentedKey: string | undefined): Promise<SettleAccess> {
    const record = await this.options.repository.find(merchant.toLowerCase());
    if (!record?.settleKeyHash) return 'open';
    if (presentedKey === undefined) return 'denied';
    const expected = Buffer.from(record.settleKeyHash, 'hex');
    return timingSafeEqual(expected, Buffer.from(settleKeyHash(presentedKey), 'hex')) ? 'granted' : 'denied';
  }

  /** The merchant a settle key belongs to, for merchant-scoped reads. */
  async merchantOfSettleKey(key: string): Promise<string | null> {
    return (await this.options.repository.findBySettleKeyHash(settleKeyHash(key)))?.address ?? null;
  }
}
