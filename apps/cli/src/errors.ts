import { ConfigError } from '@facilitator/config';

/** A failure the user can act on. Printed as one line (`error: …`), never with a stack trace. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

interface EthersLikeError {
  code?: string;
  shortMessage?: string;
  reason?: string | null;
  message?: string;
  cause?: unknown;
  info?: { error?: { message?: string } };
}

/** One line saying what went wrong, for any error: ours, a configuration variable, ethers, fetch. */
export function oneLine(err: unknown): string {
  if (err instanceof CliError || err instanceof ConfigError) return firstLine(err.message);
  const e = (err ?? {}) as EthersLikeError;
  switch (e.code) {
    case 'INSUFFICIENT_FUNDS':
      return 'the signing account has not enough ETH to pay for gas';
    case 'CALL_EXCEPTION':
      return `the token contract refused the call: ${e.reason ?? e.info?.error?.message ?? e.shortMessage ?? 'execution reverted'}`;
    case 'NONCE_EXPIRED':
    case 'REPLACEMENT_UNDERPRICED':
      return `the node refused the transaction (${e.shortMessage ?? e.code}); another transaction from this account may be pending: try again`;
    case 'NETWORK_ERROR':
    case 'SERVER_ERROR':
    case 'TIMEOUT':
      return `the RPC failed: ${firstLine(e.shortMessage ?? e.message ?? e.code)}`;
  }
  if (err instanceof Error) {
    const base = (err as EthersLikeError).shortMessage ?? err.message;
    const cause = (err as EthersLikeError).cause;
    const causeText = cause instanceof Error ? ((cause as { code?: string }).code ?? cause.message) : undefined;
    return firstLine(causeText && !base.includes(causeText) ? `${base} (${causeText})` : base);
  }
  return firstLine(String(err));
}

function firstLine(text: string): string {
  return text.split('\n')[0].trim();
}
