// The reference the verify target is stated against: @x402/evm's own "exact" facilitator scheme, run
// in-process (no HTTP, no database) on the same machine and against the same anvil and USDC.
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { baseSepolia } from 'viem/chains';
import type { Devnet } from '@facilitator/evm-devnet';
import { PRICE_UNITS, type PaymentFactory, type SignedPayment } from './payments';
import { epochMs, summarize, type LatencySummary } from './stats';
import { referenceSigner } from './reference-signer';

export interface ReferenceResult {
  implementation: string;
  concurrency: number;
  durationSeconds: number;
  verified: number;
  invalid: number;
  errors: number;
  perSecond: number;
  latencyMs: LatencySummary;
  firstInvalidReason?: string;
}

type Scheme = InstanceType<typeof ExactEvmScheme>;
type VerifyArgs = Parameters<Scheme['verify']>;

function schemeFor(devnet: Devnet): Scheme {
  if (devnet.chainId !== baseSepolia.id) throw new Error(`reference expects chain ${baseSepolia.id}, devnet is ${devnet.chainId}`);
  // The wiring x402's own facilitator examples use: a viem wallet client with public actions.
  const signer = referenceSigner(devnet.accounts.treasury.privateKey, devnet.rpcUrl);
  return new ExactEvmScheme(signer);
}

function requestOf(devnet: Devnet, payment: SignedPayment): VerifyArgs {
  const requirements = {
    scheme: 'exact',
    network: `eip155:${devnet.chainId}` as const,
    asset: devnet.token,
    amount: PRICE_UNITS.toString(),
    payTo: devnet.accounts.merchant.address,
    maxTimeoutSeconds: 60,
    extra: { name: devnet.eip712Domain.name, version: devnet.eip712Domain.version },
  };
  const payload = { x402Version: 2, accepted: requirements, payload: { authorization: payment.authorization, signature: payment.signature } };
  return [payload, requirements] as unknown as VerifyArgs;
}

/**
 * Verifies distinct payments with `concurrency` calls in flight for `seconds` (after a warm-up), the way an
 * in-process facilitator would serve concurrent requests.
 */
export async function measureReference(
  devnet: Devnet,
  factory: PaymentFactory,
  options: { concurrency: number; seconds: number; warmupSeconds: number },
): Promise<ReferenceResult> {
  const scheme = schemeFor(devnet);
  // pre-generated like the HTTP bodies: ~300/s expected, so a generous pool is still small
  const pool = Array.from({ length: Math.max(2_000, Math.ceil(1_500 * (options.seconds + options.warmupSeconds))) }, () =>
    requestOf(devnet, factory.make()),
  );
  let next = 0;
  const take = () => (next < pool.length ? pool[next++] : requestOf(devnet, factory.make()));

  const run = async (seconds: number, record: boolean) => {
    const latencies: number[] = [];
    let verified = 0;
    let invalid = 0;
    let errors = 0;
    let firstInvalidReason: string | undefined;
    const started = epochMs();
    const end = started + seconds * 1000;
    const loop = async () => {
      while (epochMs() < end) {
        const args = take();
        const t0 = epochMs();
        try {
          const response = await scheme.verify(...args);
          if (response.isValid) {
            verified++;
            latencies.push(epochMs() - t0);
          } else {
            invalid++;
            firstInvalidReason ??= `${response.invalidReason}: ${response.invalidMessage ?? ''}`;
          }
        } catch (err) {
          errors++;
          firstInvalidReason ??= `threw: ${(err as Error).message.slice(0, 200)}`;
        }
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, loop));
    const elapsed = (epochMs() - started) / 1000;
    if (!record) return undefined;
    return { verified, invalid, errors, elapsed, latencies, firstInvalidReason };
  };

  await run(options.warmupSeconds, false);
  const measured = (await run(options.seconds, true))!;
  return {
    implementation: '@x402/evm ExactEvmScheme.verify (in-process, viem http client)',
    concurrency: options.concurrency,
    durationSeconds: Number(measured.elapsed.toFixed(2)),
    verified: measured.verified,
    invalid: measured.invalid,
    errors: measured.errors,
    perSecond: measured.verified / measured.elapsed,
    latencyMs: summarize(measured.latencies),
    firstInvalidReason: measured.firstInvalidReason,
  };
}
