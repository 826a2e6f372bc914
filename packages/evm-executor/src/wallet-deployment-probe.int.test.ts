// A compile check (solc-js): in the int tier, not the unit tier, which a developer runs after every change.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { WALLET_DEPLOYMENT_PROBE_ARTIFACT } from './wallet-deployment-probe-artifact';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const solc = require('solc') as { compile(input: string): string; version(): string };

describe('the wallet-deployment probe', () => {
  it('is what its source compiles to', () => {
    const file = 'WalletDeploymentProbe.sol';
    const input = {
      language: 'Solidity',
      sources: { [file]: { content: readFileSync(path.join(__dirname, '..', 'contracts', file), 'utf8') } },
      settings: {
        evmVersion: 'prague',
        optimizer: { enabled: true, runs: 200 },
        metadata: { bytecodeHash: 'none', appendCBOR: false },
        outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
      },
    };
    const output = JSON.parse(solc.compile(JSON.stringify(input)));
    const contract = output.contracts[file].WalletDeploymentProbe;
    expect('0x' + contract.evm.bytecode.object).toBe(WALLET_DEPLOYMENT_PROBE_ARTIFACT.bytecode);
    expect(contract.abi).toEqual(WALLET_DEPLOYMENT_PROBE_ARTIFACT.abi);
  });
});
