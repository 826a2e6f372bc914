export { calldataGas, itemCalldataGas } from './calldata-gas';
export { settleCalldata, itemKey, itemOutcomes, settledItemLogs, executorInterface, itemTuple, type ExecutorItem } from './executor-calls';
export {
  executorStatus,
  executorConfigProblem,
  deployExecutor,
  delegationRequest,
  submitDelegation,
  setUpExecutor,
  proxiesOf,
  X402_PERMIT2_PROXIES,
  type ExecutorConfig,
  type ExecutorStatus,
  type SetupProgress,
  type ExecutorSetupKeys,
  type DelegationRequest,
} from './executor-setup';
export {
  walletDeploymentProbeCode,
  walletDeploymentProbeResult,
  walletDeploymentProbeFailure,
  type WalletDeploymentProbeRequest,
} from './wallet-deployment-probe';
export { implementationOfFactoryCall, decodeImplementation, IMPLEMENTATION_VIEW } from './wallet-factory-calls';
