import { exitOnConfigError, loadWorkerConfig } from '@facilitator/config';
import { createLogger } from '@facilitator/logging';
import { SignerError } from '@facilitator/signers';
import { buildWorker } from './build-worker';
import { keyPowers } from './key-powers';
import { RelayerServerError } from './relayer-server-keys';
import { openKeysOf, type WorkerKeys } from './worker-keys';

const config = exitOnConfigError(() => loadWorkerConfig());
const logger = createLogger({
  service: 'worker',
  level: config.logLevel,
  // RPC URLs too: providers put API keys in them
  secrets: [...(config.treasury ? [config.treasury.privateKey] : []), ...config.relayers.map((r) => r.privateKey), config.webhookSecret, ...config.networks.flatMap((n) => n.rpcUrls), ...(config.transactionProvider.kind === 'openzeppelin-relayer' ? [config.transactionProvider.apiKey] : []),
    // a PKCS#11 spec may carry its PIN (pin-value=); a KMS ARN is no secret and names the key in the logs
    ...[...config.relayerSigners, ...(config.treasurySigner ? [config.treasurySigner] : [])].filter((spec) => /pin-value=/i.test(spec)),
  ],
});

/** Every key opened and made to sign once; a key that cannot sign stops the worker with one line naming it. */
async function openKeys(): Promise<WorkerKeys> {
  try {
    const keys = await openKeysOf(config);
    if (config.worker.settlementMode === 'sequential' && keys.kind === 'openzeppelin-relayer' && !keys.treasurySigns) {
      throw new RelayerServerError('SETTLEMENT_MODE=sequential sends fees from the treasury: give the OpenZeppelin relayer whose signer is the treasury in OZ_RELAYER_IDS_<chainId>');
    }
    return keys;
  } catch (err) {
    if (err instanceof SignerError) {
      process.stderr.write(`signer error: ${err.message}\n`);
      process.exit(1);
    }
    if (err instanceof RelayerServerError) {
      process.stderr.write(`transaction provider error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const keys = await openKeys();
  let runtime: ReturnType<typeof buildWorker>;
  try {
    runtime = buildWorker(config, logger, keys);
  } catch (err) {
    logger.error('worker failed to start', { err: (err as Error).message });
    process.exit(1);
  }
  logger.info('worker started', { queues: config.worker.queues, networks: config.networks.map((n) => n.caip2) });
  for (const key of keyPowers(keys, config.feeAmount)) logger.info('signing key', { ...key });
  if (keys.kind === 'openzeppelin-relayer' && keys.treasuryRelayers.length > 0) {
    // said on every start: the operator opted in, and whoever reads the logs learns what the API key is
    logger.warn('OZ_RELAYER_API_KEY is a treasury credential (OZ_RELAYER_ALLOW_TREASURY=true)', {
      treasury_relayers: keys.treasuryRelayers,
      canDo: "transferFrom every merchant's whole allowance to any address, through the relayer server: guard it like the treasury's key",
    });
  }

  let stopping = false;
  async function shutdown(signal: string) {
    if (stopping) return;
    stopping = true;
    logger.info('worker draining', { signal });
    // bounded, whatever a job is waiting on: unfinished work keeps its persisted state and is resumed elsewhere
    setTimeout(() => {
      logger.warn('worker exiting with jobs still running; they will be resumed');
      process.exit(0);
    }, config.worker.shutdownTimeoutMs + 3_000).unref();
    await runtime.close();
    await keys.close();
    logger.info('worker stopped');
    process.exit(0);
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  logger.error('worker failed to start', { err: (err as Error)?.message ?? String(err) });
  process.exit(1);
});
