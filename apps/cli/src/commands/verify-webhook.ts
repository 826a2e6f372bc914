import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { EnvReader } from '@facilitator/config';
import { verifyWebhookDelivery, type WebhookCheck } from '@facilitator/webhooks';
import { CliError } from '../errors';
import type { Output } from '../output';

export interface VerifyWebhookFlags {
  secret?: string;
  secretFile?: string;
  /** the spec's x-webhook-signature */
  signature?: string;
  /** Standard Webhooks headers */
  webhookId?: string;
  webhookTimestamp?: string;
  webhookSignature?: string;
}

const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The merchant's webhook secret: `--secret-file` (a file holding it, so it stays out of shell history
 * and `ps`), else `--secret`, else the WEBHOOK_SECRET variable.
 */
function secretOf(flags: VerifyWebhookFlags): string {
  if (flags.secretFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.secretFile, 'utf8').trim();
    } catch (err) {
      throw new CliError(`cannot read the secret file ${flags.secretFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (text === '') throw new CliError(`the secret file ${flags.secretFile} is empty`);
    return text;
  }
  const secret = flags.secret ?? new EnvReader(process.env).raw('WEBHOOK_SECRET');
  if (secret === undefined) throw new CliError('pass --secret-file <file>, set WEBHOOK_SECRET, or pass --secret <secret>');
  return secret;
}

/** The Standard Webhooks check, by the official library: signature (any of the live secrets) and timestamp (5 minutes). */
function standardWebhooksCheck(body: string, flags: VerifyWebhookFlags, secret: string): WebhookCheck {
  if (!secret.startsWith('whsec_')) return { valid: false, reason: 'a Standard Webhooks secret starts with whsec_' };
  try {
    const payload = new Webhook(secret).verify(body, {
      'webhook-id': flags.webhookId ?? '',
      'webhook-timestamp': flags.webhookTimestamp ?? '',
      'webhook-signature': flags.webhookSignature ?? '',
    }) as Record<string, unknown>;
    return { valid: true, payload };
  } catch (err) {
    return { valid: false, reason: `Standard Webhooks: ${(err as Error).message}` };
  }
}

/**
 * `facilitator verify-webhook`: checks a delivery's raw body (standard input) against its
 * `x-webhook-signature` (`--signature`) and/or its Standard Webhooks headers (`--webhook-id`,
 * `--webhook-timestamp`, `--webhook-signature`). Exit 0 and `valid`, or exit 1 and why not.
 */
export async function verifyWebhookCommand(flags: VerifyWebhookFlags, out: Output): Promise<number> {
  const standard = flags.webhookId !== undefined || flags.webhookTimestamp !== undefined || flags.webhookSignature !== undefined;
  if (standard && (flags.webhookId === undefined || flags.webhookTimestamp === undefined || flags.webhookSignature === undefined)) {
    throw new CliError('the Standard Webhooks check needs all three: --webhook-id, --webhook-timestamp and --webhook-signature');
  }
  if (!standard && flags.signature === undefined) {
    throw new CliError('pass --signature <x-webhook-signature>, or the Standard Webhooks headers (--webhook-id, --webhook-timestamp, --webhook-signature)');
  }
  const secret = secretOf(flags);
  const body = await readStdin();
  const checks: WebhookCheck[] = [];
  if (flags.signature !== undefined) checks.push(verifyWebhookDelivery(body, flags.signature.trim(), secret));
  if (standard) checks.push(standardWebhooksCheck(body, flags, secret));
  const failed = checks.find((c): c is Extract<WebhookCheck, { valid: false }> => !c.valid);
  if (!failed) {
    const { event_type, event_id } = (checks[0] as Extract<WebhookCheck, { valid: true }>).payload;
    out.line(`valid${typeof event_type === 'string' ? ` (${event_type}${typeof event_id === 'string' ? ` ${event_id}` : ''})` : ''}`);
    return 0;
  }
  const hint =
    failed.reason === 'signature does not match'
      ? ': the body was changed, or the secret is not the one that signed it (pass the body exactly as received)'
      : '';
  out.line(`invalid: ${failed.reason}${hint}`);
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
