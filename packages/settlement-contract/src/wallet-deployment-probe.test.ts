import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Interface } from 'ethers';
import { WALLET_DEPLOYMENT_PROBE_ARTIFACT } from './wallet-deployment-probe-artifact';
import { walletDeploymentProbeFailure, walletDeploymentProbeResult } from './wallet-deployment-probe';

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

  it('reads which step failed and why', () => {
    const probe = new Interface(WALLET_DEPLOYMENT_PROBE_ARTIFACT.abi as never);
    const error = new Interface(['function Error(string)']).encodeFunctionData('Error', ['FiatTokenV2: invalid signature']);
    expect(walletDeploymentProbeFailure(probe.encodeErrorResult('TransferFailed', [error]))).toEqual({ stage: 'transfer', reason: 'FiatTokenV2: invalid signature' });
    expect(walletDeploymentProbeFailure(probe.encodeErrorResult('DeploymentFailed', ['0x']))).toEqual({ stage: 'deployment', reason: 'reverted without a reason' });
    expect(walletDeploymentProbeFailure(probe.encodeErrorResult('WalletNotDeployed', []))).toMatchObject({ stage: 'deployment' });
    expect(walletDeploymentProbeFailure(undefined)).toMatchObject({ stage: 'unknown' });
    expect(walletDeploymentProbeResult('0x' + '0'.repeat(63) + '5' + '0'.repeat(62) + '10')).toEqual({ deployGas: 5n, transferGas: 16n });
  });
});
