import type { SecretBox } from './secret-box';

const MAX_ENTRIES = 20_000;

/**
 * Remembers decrypted webhook secrets by their stored ciphertext (and merchant, the associated data). A
 * ciphertext never changes meaning, so this memo can never be stale: a rotation writes a new row, which is
 * simply not in it yet. It spares each delivery the decryption, not the read of which secrets are live.
 * Bounded (strangers choose merchants): when full, the oldest entry goes.
 */
export class OpenedSecrets {
  private readonly plaintexts = new Map<string, string>();

  constructor(private readonly box: SecretBox) {}

  open(ciphertext: string, merchant: string): string {
    const key = `${merchant}\n${ciphertext}`;
    const known = this.plaintexts.get(key);
    if (known !== undefined) return known;
    const plaintext = this.box.open(ciphertext, merchant);
    if (this.plaintexts.size >= MAX_ENTRIES) this.plaintexts.delete(this.plaintexts.keys().next().value!);
    this.plaintexts.set(key, plaintext);
    return plaintext;
  }
}
