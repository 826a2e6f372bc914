import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const INFO = 'x402-facilitator merchant webhook secrets v1';
const VERSION = 'v1';
/** AES-GCM's full authentication tag, the only length written or accepted */
const TAG_BYTES = 16;

/**
 * Encrypts merchants' webhook secrets at rest: AES-256-GCM with a key derived (HKDF-SHA256) from the
 * master secret WEBHOOK_SECRET. The merchant address is the associated data, so a stored secret moved
 * to another merchant's row no longer decrypts. Format: `v1.<iv>.<tag>.<ciphertext>` (base64url).
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(masterSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', Buffer.from(masterSecret, 'utf8'), Buffer.alloc(0), INFO, 32));
  }

  seal(plaintext: string, merchant: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(merchant, 'utf8'));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), data].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  /** Throws when the text was not sealed with this master secret for this merchant. */
  open(sealed: string, merchant: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== VERSION || data === undefined) throw new Error('not a sealed secret');
    const authTag = Buffer.from(tag, 'base64url');
    // GCM accepts tags as short as 4 bytes unless told the length: a truncated tag is a forgery made
    // 2^96 times easier, so only the full tag we write is accepted
    if (authTag.length !== TAG_BYTES) throw new Error('not a sealed secret (truncated tag)');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(merchant, 'utf8'));
    decipher.setAuthTag(authTag);
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}
