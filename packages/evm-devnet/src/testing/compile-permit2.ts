// Compiles Uniswap's Permit2 from the source npm ships (@uniswap/v4-periphery's lib/permit2) with the
// compiler and settings of its own foundry.toml (solc 0.8.17, via-IR, 1,000,000 runs, no metadata hash), for
// the committed artifact and for the test that checks the artifact is what that source compiles to. Both
// packages are dev dependencies; nothing at runtime reaches this file.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { compileStandardJson, type SolcJs } from './solc-standard-json';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const solc = require('solc-permit2') as SolcJs;

/** Permit2.sol's pragma admits exactly this release. */
export const PERMIT2_SOLC_VERSION = '0.8.17';
const SOURCE = 'src/Permit2.sol';

export interface CompiledPermit2 {
  compiler: string;
  /** where the source came from, for the artifact's header */
  source: string;
  /** runtime code with zeros where the constructor writes its immutables */
  deployedBytecode: string;
  /** byte ranges of the runtime code holding EIP712's cached chain id and domain separator */
  immutables: { cachedChainId: Array<{ start: number; length: number }>; cachedDomainSeparator: Array<{ start: number; length: number }> };
}

function permit2Root(): { root: string; version: string } {
  const manifest = require.resolve('@uniswap/v4-periphery/package.json');
  const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  return { root: path.join(path.dirname(manifest), 'lib', 'permit2'), version };
}

interface AstNode {
  id?: number;
  nodeType?: string;
  name?: string;
  [key: string]: unknown;
}

/** The names of the state variables with these AST ids, wherever they are declared. */
function namesOf(ids: Set<number>, node: unknown, found = new Map<number, string>()): Map<number, string> {
  if (Array.isArray(node)) {
    for (const child of node) namesOf(ids, child, found);
  } else if (node && typeof node === 'object') {
    const n = node as AstNode;
    if (n.nodeType === 'VariableDeclaration' && n.id !== undefined && ids.has(n.id)) found.set(n.id, String(n.name));
    for (const value of Object.values(n)) if (value && typeof value === 'object') namesOf(ids, value, found);
  }
  return found;
}

export function compilePermit2(): CompiledPermit2 {
  const { root, version } = permit2Root();
  // Permit2's remapping (solmate/=lib/solmate/) and its relative imports, read from the package
  const findImports = (p: string) => {
    const file = path.join(root, p.startsWith('solmate/') ? p.replace(/^solmate\//, 'lib/solmate/') : p);
    return existsSync(file) ? { contents: readFileSync(file, 'utf8') } : { error: `not found: ${p}` };
  };
  const input = {
    language: 'Solidity',
    sources: { [SOURCE]: { content: readFileSync(path.join(root, SOURCE), 'utf8') } },
    settings: {
      optimizer: { enabled: true, runs: 1_000_000 },
      viaIR: true,
      metadata: { bytecodeHash: 'none' },
      outputSelection: { [SOURCE]: { Permit2: ['evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'] }, '*': { '': ['ast'] } },
    },
  };
  const output = compileStandardJson<{
    sources: Record<string, { ast: unknown }>;
    contracts: Record<string, Record<string, { evm: { deployedBytecode: { object: string; immutableReferences: Record<string, Array<{ start: number; length: number }>> } } }>>;
  }>(solc, PERMIT2_SOLC_VERSION, 'Permit2 (installed as solc-permit2)', input, findImports);
  const runtime = output.contracts[SOURCE].Permit2.evm.deployedBytecode;
  const ids = new Set(Object.keys(runtime.immutableReferences).map(Number));
  const names = namesOf(ids, Object.values(output.sources).map((s) => s.ast));
  const rangesOf = (name: string) => {
    const id = [...names].find(([, n]) => n === name)?.[0];
    if (id === undefined) throw new Error(`Permit2 has no immutable ${name}: the source is not the one this was written for`);
    return runtime.immutableReferences[String(id)];
  };
  return {
    compiler: solc.version(),
    source: `@uniswap/v4-periphery@${version} lib/permit2/${SOURCE}`,
    deployedBytecode: '0x' + runtime.object,
    immutables: { cachedChainId: rangesOf('_CACHED_CHAIN_ID'), cachedDomainSeparator: rangesOf('_CACHED_DOMAIN_SEPARATOR') },
  };
}
