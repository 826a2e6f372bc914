/** The cause of a failure on one line: what a start-up log or an operator's terminal shows. */
export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/**
 * A signer that cannot sign (or be opened): the message is one line naming the signer by its description,
 * never a secret and never a stack, so a worker can stop on it with exactly that line.
 */
export class SignerError extends Error {
  override readonly name = 'SignerError';

  constructor(
    /** The signer's description (`kms:arn:…`, `pkcs11:token=…;object=…`, `local:0x…`). */
    readonly signer: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`signer ${signer}: ${oneLine(reason)}`, options);
  }
}

/** The reason of any failure: the message of an Error (its name when it has none), else its text. */
export function reasonOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/**
 * `error` as a SignerError of `signer` (one already is stays as it is); `doing` says what failed
 * ("KMS Sign", "C_Login"), before the cause's own words.
 */
export function signerErrorOf(signer: string, error: unknown, doing?: string): SignerError {
  if (error instanceof SignerError) return error;
  const reason = reasonOf(error);
  return new SignerError(signer, doing ? `${doing}: ${reason}` : reason, { cause: error });
}

/** A configuration string that does not name a signer; one line, with the entry's place and never a secret. */
export class SignerSpecError extends Error {
  override readonly name = 'SignerSpecError';

  constructor(message: string) {
    super(oneLine(message));
  }
}
