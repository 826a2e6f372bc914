import { EnvReader } from '@facilitator/config';
import { verifyWebhookDelivery } from '@facilitator/webhooks';
import { CliError } from '../errors';
import type { Output } from '../output';

export interface VerifyWebhookFlags {
  secret?: string;
  signature: string;
}

const MAX_BODY_BYTES = 1024 * 1024;

/**
 * `facilitator verify-webhook`: checks a delivery's raw body (standard input) against its
 * `x-webhook-signature`. Exit 0 and `valid`, or exit 1 and why not.
 */
export async function verifyWebhookCommand(flags: VerifyWebhookFlags, out: Output): Promise<number> {
  const secret = flags.secret ?? new EnvReader(process.env).raw('WEBHOOK_SECRET');
  if (secret === undefined) throw new CliError('pass --secret <secret> or set WEBHOOK_SECRET');
  const body = await readStdin();
  const check = verifyWebhookDelivery(body, flags.signature.trim(), secret);
  if (check.valid) {
    const { event_type, event_id } = check.payload;
    out.line(`valid${typeof event_type === 'string' ? ` (${event_type}${typeof event_id === 'string' ? ` ${event_id}` : ''})` : ''}`);
    return 0;
  }
  const hint =
    check.reason === 'signature does not match'
      ? ': the body was changed, or the secret is not the one that signed it (pass the body exactly as received)'
      : '';
  out.line(`invalid: ${check.reason}${hint}`);
  return 1;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new CliError('pipe the delivery\'s raw body on standard input (e.g. < body.json)');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new CliError('the body on standard input is larger than 1 MiB: not a webhook delivery');
    chunks.push(buffer);
  }
  if (size === 0) throw new CliError('standard input is empty: pipe the delivery\'s raw body');
  return Buffer.concat(chunks).toString('utf8');
}
