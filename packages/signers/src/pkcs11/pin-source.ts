import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Pkcs11Uri } from './pkcs11-uri';

/** The user PIN of a PKCS#11 URI: `pin-value`, or the first line of the `pin-source` file. */
export async function readPin(uri: Pick<Pkcs11Uri, 'pinSource' | 'pinValue'>): Promise<string> {
  if (uri.pinValue !== undefined) return uri.pinValue;
  const source = uri.pinSource!;
  const path = source.startsWith('file:') ? fileURLToPath(source.startsWith('file://') ? source : `file://${source.slice('file:'.length)}`) : source;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the PIN file ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  // a secret mounted by Docker or Kubernetes often ends with a newline that is not part of the PIN
  const pin = text.replace(/\r?\n$/, '');
  if (pin === '' || /[\r\n]/.test(pin)) throw new Error(`the PIN file ${path} must hold the PIN on one line`);
  return pin;
}
