import { getAddress, Wallet, type JsonRpcProvider } from 'ethers';
import { EXECUTOR_MAX_RELAYERS } from '@facilitator/config';
import { setUpExecutor, type ExecutorConfig, type ExecutorSetupKeys, type ExecutorStatus, type SetupProgress } from '@facilitator/evm-executor';
import { connectChain, resolveChainSettings } from '../chain-context';
import { CliError, oneLine } from '../errors';
import { resolveExecutorSettings } from '../executor-settings';
import { parseWholeNumber, table } from '../format';
import type { Output } from '../output';
import { configRows, stateRows } from './executor-status';

export interface ExecutorSetupFlags {
  network: string;
  rpcUrl?: string;
  timeout?: string;
}

/**
 * `facilitator executor setup`: deploys an executor holding this configuration and has the treasury
 * delegate to it (EIP-7702), unless it already does. The treasury signs the authorization (only its key
 * can change what its address runs); the first relayer pays the gas, as it pays for settlements.
 */
export async function executorSetupCommand(flags: ExecutorSetupFlags, out: Output): Promise<number> {
  // everything that can be checked offline first, so a typo fails before anything is sent
  const settings = resolveChainSettings(flags);
  const { config, treasuryKey, relayerKeys } = resolveExecutorSettings(settings);
  if (treasuryKey === undefined) throw new CliError('executor setup needs TREASURY_PRIVATE_KEY: the treasury signs the EIP-7702 authorization (or use --print-authorization)');
  if (config.relayers.length > EXECUTOR_MAX_RELAYERS) {
    throw new CliError(`${config.relayers.length} relayers are configured; the settlement executor admits ${EXECUTOR_MAX_RELAYERS}`);
  }
  const keys: ExecutorSetupKeys = { treasuryKey, senderKey: relayerKeys[0] ?? treasuryKey };
  const sender = new Wallet(keys.senderKey).address;
  const timeoutSeconds = flags.timeout !== undefined ? Number(parseWholeNumber('--timeout', flags.timeout, 1n, 3600n)) : 300;

  const chain = await connectChain(settings);
  const progress = progressPrinter(out);
  try {
    out.line(table([...configRows(settings, config, chain.token), ['sender', `${sender} (pays the gas: ${relayerKeys.length > 0 ? 'the first of RELAYER_PRIVATE_KEYS' : 'the treasury itself, no RELAYER_PRIVATE_KEYS set'})`]]));
    out.line();
    const setUp = runSetUp(chain.provider, config, keys, sender, settings.network.label, progress.onProgress);
    const status = await withTimeout(setUp, timeoutSeconds, `executor setup did not finish within ${timeoutSeconds} s (--timeout); a transaction may still be pending: check with "facilitator executor status --network ${settings.network.caip2}"`);
    out.line();
    out.line(table(stateRows(status)));
    if (status.state !== 'ready') throw new CliError(`the executor is still not set up: ${status.why}`);
    return 0;
  } finally {
    progress.stop();
    chain.close();
  }
}

/** setUpExecutor, its failures turned into one line that names what failed. */
async function runSetUp(
  provider: JsonRpcProvider,
  config: ExecutorConfig,
  keys: ExecutorSetupKeys,
  sender: string,
  networkLabel: string,
  onProgress: (p: SetupProgress) => void,
): Promise<ExecutorStatus> {
  try {
    return await setUpExecutor(provider, config, keys, onProgress);
  } catch (err) {
    if (err instanceof CliError) throw err;
    const e = err as { code?: string; shortMessage?: string };
    if (e.code === 'INSUFFICIENT_FUNDS') throw new CliError(`the sender ${sender} has not enough ETH on ${networkLabel} to pay for gas`);
    if (e.code === 'CALL_EXCEPTION') throw new CliError(`executor setup failed: a transaction reverted (${e.shortMessage ?? 'execution reverted'})`);
    throw new CliError(`executor setup failed: ${oneLine(err)}`);
  }
}

/** Fails with `message` after `seconds`; the set-up left running is ended by the process exiting. */
async function withTimeout<T>(work: Promise<T>, seconds: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CliError(message)), seconds * 1000);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Prints each step as it happens; while a transaction waits to be mined, a terminal sees the seconds
 * (only after the first one, so a chain that mines at once prints nothing in between).
 */
function progressPrinter(out: Output) {
  let ticker: NodeJS.Timeout | undefined;
  const stop = () => {
    clearInterval(ticker);
    ticker = undefined;
  };
  const waitForMining = () => {
    const started = Date.now();
    ticker = setInterval(() => out.status(`waiting for it to be mined… ${Math.floor((Date.now() - started) / 1000)} s`), 1000);
    ticker.unref();
  };
  const step = (label: string, text: string) => out.line(`${label.padEnd(10)}  ${text}`);
  const onProgress = (p: SetupProgress) => {
    stop();
    switch (p.step) {
      case 'checked':
        if (p.status.state === 'ready') step('checked', `already set up: the treasury delegates to the settlement executor at ${getAddress(p.status.executor)}; nothing to send`);
        else step('checked', `${p.status.state}: ${p.status.why}`);
        break;
      case 'deploying':
        step('deploying', `${p.hash} (the executor with this configuration)`);
        waitForMining();
        break;
      case 'deployed':
        step('deployed', `${getAddress(p.executor)} (block ${p.receipt.blockNumber})`);
        break;
      case 'delegating':
        step('delegating', `${p.hash} (the treasury's authorization to run ${getAddress(p.executor)})`);
        waitForMining();
        break;
      case 'delegated':
        step('delegated', `confirmed in block ${p.receipt.blockNumber}`);
        break;
    }
  };
  return { onProgress, stop };
}
