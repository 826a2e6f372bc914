import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { optionalNumber, stopOnSignal } from './dev-process';
import { startSolanaDevnet } from './solana-devnet';

/**
 * Runs the local Solana chain until ^C, for working on the API and worker by hand:
 *   node packages/solana-devnet/dist/main.js [--port 8899] [--host 127.0.0.1] [--slot-time-ms 400] [--info-file .devnet/solana-devnet.json]
 * Other processes read the info file (see SolanaDevnetInfo); it is removed on exit.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'slot-time-ms': { type: 'string' },
      'info-file': { type: 'string', default: '.devnet/solana-devnet.json' },
    },
  });
  const infoFile = resolve(values['info-file']!);
  mkdirSync(dirname(infoFile), { recursive: true });
  const devnet = await startSolanaDevnet({
    port: optionalNumber(values.port),
    host: values.host,
    slotTimeMs: optionalNumber(values['slot-time-ms']),
    infoFile,
  });
  const { info } = devnet;
  console.log(`solana devnet ${info.rpcUrl} (${info.network}, pid ${info.pid}); description in ${infoFile}`);
  console.log(`USDC ${info.token.mint}; payer ${info.accounts.payer.address}; merchant ${info.accounts.merchant.address}`);
  console.log(`treasury ${info.accounts.treasury.address} (merchant's delegate); fee payer ${info.accounts.feePayer.address}`);

  stopOnSignal(infoFile, () => devnet.stop());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
