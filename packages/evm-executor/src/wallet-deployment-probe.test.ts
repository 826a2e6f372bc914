// The compile check (solc-js) is in wallet-deployment-probe.int.test.ts, out of the unit tier.
import { Interface } from 'ethers';
import { WALLET_DEPLOYMENT_PROBE_ARTIFACT } from './wallet-deployment-probe-artifact';
import { walletDeploymentProbeFailure, walletDeploymentProbeResult } from './wallet-deployment-probe';

describe('the wallet-deployment probe', () => {
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
