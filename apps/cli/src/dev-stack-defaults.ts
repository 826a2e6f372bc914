import { existsSync } from 'node:fs';
import path from 'node:path';
import { readDevnetInfo, type DevnetInfo } from '@facilitator/evm-devnet';

/** The repository the CLI was built in: `npm run dev` keeps its files under its `.devnet`. */
const ROOT = path.resolve(__dirname, '../../..');

/** Where `npm run dev` writes its devnet description: in DEV_STACK_DIR, as the dev stack reads it, else `.devnet`. */
export function devnetFilePath(env: NodeJS.ProcessEnv): string {
  return path.join(env.DEV_STACK_DIR ? path.resolve(env.DEV_STACK_DIR) : path.join(ROOT, '.devnet'), 'devnet.json');
}

export interface DevStackDefaults {
  file: string;
  /** the variables the file gave, each one that was unset */
  filled: string[];
}

/** Set when the dev stack's file gave the variables: the chain they are for (a command on another refuses them). */
export const DEV_STACK_CHAIN_VARIABLE = 'FACILITATOR_DEV_STACK_CHAIN_ID';

/** Any of these set means the user configured a chain, treasury or merchant: the dev stack's file gives nothing. */
const CONFIGURED = ['TREASURY_ADDRESS', 'TREASURY_PRIVATE_KEY', 'MERCHANT_PRIVATE_KEY', 'MERCHANT_KEYSTORE'];

/**
 * When a dev stack is running, its devnet file gives the variables a command would otherwise need set: the
 * chain's RPC URL and token, the treasury, the merchant's key. All of them or none: only when none of them
 * (nor another key or treasury) is set, so a real key is never paired with the dev treasury, and only from
 * a devnet that is running (its anvil process alive), as a file a stopped stack left behind would point a
 * command at a dead local RPC. resolveChainSettings refuses them on any other chain.
 */
export function applyDevStackDefaults(env: NodeJS.ProcessEnv): DevStackDefaults | undefined {
  const file = devnetFilePath(env);
  if (!existsSync(file)) return undefined;
  let info: DevnetInfo;
  try {
    info = readDevnetInfo(file);
  } catch {
    return undefined;
  }
  if (!isRunning(info.pid)) return undefined;
  const defaults: Record<string, string> = {
    [`RPC_URL_${info.chainId}`]: info.rpcUrl,
    [`TOKEN_ADDRESS_${info.chainId}`]: info.token.address,
    TREASURY_ADDRESS: info.accounts.treasury.address,
    MERCHANT_PRIVATE_KEY: info.accounts.merchant.privateKey,
  };
  if ([...Object.keys(defaults), ...CONFIGURED].some((name) => env[name] !== undefined)) return undefined;
  Object.assign(env, defaults, { [DEV_STACK_CHAIN_VARIABLE]: String(info.chainId) });
  return { file, filled: Object.keys(defaults) };
}

function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
