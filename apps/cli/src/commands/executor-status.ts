import { getAddress } from 'ethers';
import { executorStatus, type ExecutorConfig, type ExecutorStatus } from '@facilitator/evm-executor';
import { connectChain, resolveChainSettings, type ChainSettings, type TokenInfo } from '../chain-context';
import { resolveExecutorSettings } from '../executor-settings';
import { formatToken, redactUrl, table } from '../format';
import type { Output } from '../output';

export interface ExecutorStatusFlags {
  network: string;
  rpcUrl?: string;
  json?: boolean;
}

/** Exit code of `executor status` when the path is not set up: distinct from 1 (an error) so scripts can test it. */
export const NOT_SET_UP = 2;

/** `facilitator executor status`: whether the treasury delegates (EIP-7702) to an executor holding this configuration. */
export async function executorStatusCommand(flags: ExecutorStatusFlags, out: Output): Promise<number> {
  const settings = resolveChainSettings(flags);
  const { config } = resolveExecutorSettings(settings);
  const chain = await connectChain(settings);
  try {
    const status = await executorStatus(chain.provider, config);
    if (flags.json) {
      out.line(
        JSON.stringify({
          network: settings.network.caip2,
          token: config.token,
          treasury: config.treasury,
          fee: config.fee.toString(),
          relayers: config.relayers,
          state: status.state,
          ...('executor' in status ? { executor: getAddress(status.executor) } : {}),
          ...('why' in status ? { why: status.why } : {}),
        }),
      );
    } else {
      out.line(table([...configRows(settings, config, chain.token), ...stateRows(status)]));
      out.line();
      out.line(
        status.state === 'ready'
          ? 'Settlements are atomic: the fee and the transfer in one transaction of the settlement executor.'
          : `The atomic path is not set up: the worker settles sequentially (two transactions). Set it up with:\n  facilitator executor setup --network ${settings.network.caip2}`,
      );
    }
    return status.state === 'ready' ? 0 : NOT_SET_UP;
  } finally {
    chain.close();
  }
}

/** The configuration the executor is checked against. */
export function configRows(settings: ChainSettings, config: ExecutorConfig, token: TokenInfo): Array<[string, string]> {
  return [
    ['network', `${settings.network.caip2} (${settings.network.label}) via ${redactUrl(settings.rpcUrl)}`],
    ['token', `${config.token} (${token.symbol})`],
    ['treasury', config.treasury],
    ['fee', `${formatToken(config.fee, token.decimals, token.symbol)} (${config.fee} units, FEE_AMOUNT)`],
    ['relayers', config.relayers.join(', ')],
  ];
}

export function stateRows(status: ExecutorStatus): Array<[string, string]> {
  const rows: Array<[string, string]> = [['state', status.state]];
  if ('executor' in status) rows.push(['executor', getAddress(status.executor)]);
  if ('why' in status) rows.push(['why', status.why]);
  return rows;
}
