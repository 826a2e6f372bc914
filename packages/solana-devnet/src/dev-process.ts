import { rmSync } from 'node:fs';

// What this package's `main` does around the chain itself. The EVM devnet's main (packages/evm-devnet) does the
// same in its own few lines: the two local chains stay independent of each other (docs/decisions/chain-families.md).

/** On ^C or SIGTERM: removes the info file other processes read, stops the chain, and exits. */
export function stopOnSignal(infoFile: string, stop: () => Promise<void>): void {
  const shutdown = async () => {
    rmSync(infoFile, { force: true });
    await stop();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

/** A command-line option read as a number; undefined when it was not given, and an error when it is not a number. */
export function optionalNumber(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number)) throw new Error(`not a number: ${value}`);
  return number;
}
