// Compiles the devnet's test doubles of x402's Permit2 proxies (contracts/X402Permit2Proxies.sol) with the
// pinned solc-js, for the committed artifact and the test that checks it. Not part of the build.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { compileStandardJson, type SolcJs } from './solc-standard-json';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const solc = require('solc') as SolcJs;

export const PROXIES_SOLC_VERSION = '0.8.37';
const SOURCE_FILE = 'X402Permit2Proxies.sol';

export interface CompiledProxies {
  compiler: string;
  /** runtime code of each proxy (neither has immutables: it is placed as is) */
  exact: string;
  upto: string;
}

export function compileX402Proxies(): CompiledProxies {
  const input = {
    language: 'Solidity',
    sources: { [SOURCE_FILE]: { content: readFileSync(path.join(__dirname, '..', '..', 'contracts', SOURCE_FILE), 'utf8') } },
    settings: {
      evmVersion: 'prague',
      optimizer: { enabled: true, runs: 200 },
      metadata: { bytecodeHash: 'none', appendCBOR: false },
      outputSelection: { '*': { '*': ['evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'] } },
    },
  };
  const output = compileStandardJson<{
    contracts: Record<string, Record<string, { evm: { deployedBytecode: { object: string; immutableReferences?: Record<string, unknown> } } }>>;
  }>(solc, PROXIES_SOLC_VERSION, 'the x402 proxies', input);
  const runtime = (name: string) => {
    const code = output.contracts[SOURCE_FILE][name].evm.deployedBytecode;
    if (Object.keys(code.immutableReferences ?? {}).length > 0) throw new Error(`${name} has immutables: its code cannot be placed as is`);
    return '0x' + code.object;
  };
  return { compiler: solc.version(), exact: runtime('X402ExactPermit2Proxy'), upto: runtime('X402UptoPermit2Proxy') };
}
