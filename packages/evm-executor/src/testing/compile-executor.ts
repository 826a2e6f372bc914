// Compiles SettlementExecutor.sol with the pinned solc-js (a dev dependency): used to write the committed
// artifact and by the test that checks the artifact is what the source compiles to. Not part of the build.
import { readFileSync } from 'node:fs';
import path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const solc = require('solc') as { compile(input: string): string; version(): string };

/** The solc release the committed code was compiled with; the pragma admits exactly this one. */
export const SOLC_VERSION = '0.8.37';
export const SOURCE_FILE = 'SettlementExecutor.sol';
export const SOURCE_PATH = path.join(__dirname, '..', '..', 'contracts', SOURCE_FILE);
export const COMPILER_SETTINGS = { evmVersion: 'prague', optimizer: { enabled: true, runs: 200 } } as const;

export interface CompiledExecutor {
  compiler: string;
  abi: unknown[];
  /** creation code, without constructor arguments */
  bytecode: string;
  /** runtime code with zeros where the constructor writes immutables */
  deployedBytecode: string;
  /** byte ranges of the runtime code that hold immutables */
  immutableRanges: Array<{ start: number; length: number }>;
}

export function compileExecutor(): CompiledExecutor {
  if (!solc.version().startsWith(SOLC_VERSION + '+')) throw new Error(`solc ${solc.version()} is installed; the executor is pinned to ${SOLC_VERSION}`);
  const input = {
    language: 'Solidity',
    sources: { [SOURCE_FILE]: { content: readFileSync(SOURCE_PATH, 'utf8') } },
    settings: {
      ...COMPILER_SETTINGS,
      // no metadata hash: the code must not depend on the source's path or comments' bytes beyond the code itself
      metadata: { bytecodeHash: 'none', appendCBOR: false },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string; immutableReferences: Record<string, Array<{ start: number; length: number }>> } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const contract = output.contracts[SOURCE_FILE].SettlementExecutor;
  const immutableRanges = Object.values(contract.evm.deployedBytecode.immutableReferences)
    .flat()
    .sort((a, b) => a.start - b.start);
  return {
    compiler: solc.version(),
    abi: contract.abi,
    bytecode: '0x' + contract.evm.bytecode.object,
    deployedBytecode: '0x' + contract.evm.deployedBytecode.object,
    immutableRanges,
  };
}
