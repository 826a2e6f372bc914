import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { optionalNumber, stopOnSignal } from '@facilitator/solana-devnet';
import { formatUnits } from 'ethers';
import { startDevnet } from './devnet';

/**
 * Runs a devnet until ^C, for working on the API and worker by hand:
 *   node packages/chain/dist/devnet/main.js [--port 8545] [--host 0.0.0.0] [--block-time 2] [--chain-id 84532] [--info-file .devnet/devnet.json]
 * Other processes read the info file (see DevnetInfo); it is removed on exit.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'block-time': { type: 'string' },
      'chain-id': { type: 'string' },
      'info-file': { type: 'string', default: '.devnet/devnet.json' },
    },
  });
  const infoFile = resolve(values['info-file']!);
  mkdirSync(dirname(infoFile), { recursive: true });
  const devnet = await startDevnet({
    port: optionalNumber(values.port),
    host: values.host,
    blockTime: optionalNumber(values['block-time']),
    chainId: optionalNumber(values['chain-id']),
    infoFile,
  });
  const { accounts } = devnet;
  console.log(`devnet ${devnet.rpcUrl} (chain ${devnet.chainId}, anvil pid ${devnet.pid})`);
  console.log(`USDC ${devnet.token}; description in ${infoFile}`);
  console.log(`payer ${accounts.payer.address}: ${formatUnits(await devnet.balanceOf(accounts.payer.address), 6)} USDC`);
  console.log(`merchant ${accounts.merchant.address}; treasury ${accounts.treasury.address}`);

  stopOnSignal(infoFile, () => devnet.stop());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
