// Compiles a test contract with solc-js (the npm `solc` package; no binary download) and deploys it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ContractFactory, Wallet, type Contract, type JsonRpcProvider } from 'ethers';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const solc = require('solc') as { compile(input: string): string };

export interface CompiledContract {
  abi: unknown[];
  bytecode: string;
}

export function compileTestContract(file: string, name: string): CompiledContract {
  const source = readFileSync(path.join(__dirname, 'contracts', file), 'utf8');
  const input = {
    language: 'Solidity',
    sources: { [file]: { content: source } },
    settings: { evmVersion: 'prague', optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const contract = output.contracts[file][name];
  return { abi: contract.abi, bytecode: '0x' + contract.evm.bytecode.object };
}

export async function deploy(provider: JsonRpcProvider, deployerKey: string, compiled: CompiledContract, args: unknown[] = []): Promise<Contract> {
  const factory = new ContractFactory(compiled.abi as never, compiled.bytecode, new Wallet(deployerKey, provider));
  const contract = await factory.deploy(...args);
  await contract.waitForDeployment();
  return contract as Contract;
}
