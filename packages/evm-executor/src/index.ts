export { calldataGas, itemCalldataGas } from './calldata-gas';
export { settleCalldata, itemKey, itemOutcomes, settledItemLogs, executorInterface, itemTuple, type ExecutorItem } from './executor-calls';
export {
  executorStatus,
  executorConfigProblem,
  deployExecutor,
  delegationRequest,
  submitDelegation,
  setUpExecutor,
  type ExecutorConfig,
  type ExecutorStatus,
  type SetupProgress,
  type ExecutorSetupKeys,
  type DelegationRequest,
} from './executor-setup';
export { EXECUTOR_TARGET_SLOTS, targetsOf } from './executor-targets';
export {
  walletDeploymentProbeCode,
  walletDeploymentProbeResult,
  walletDeploymentProbeFailure,
  type WalletDeploymentProbeRequest,
} from './wallet-deployment-probe';
export { implementationOfFactoryCall, decodeImplementation, IMPLEMENTATION_VIEW } from './wallet-factory-calls';
