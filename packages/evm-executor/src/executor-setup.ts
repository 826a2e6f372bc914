import { Contract, ContractFactory, getAddress, hashAuthorization, verifyAuthorization, Wallet, type Authorization, type Provider, type Signer, type TransactionReceipt } from 'ethers';
import { delegateOf, isEarlierExecutorCode, isExecutorCode } from './executor-code';
import { executorInterface } from './executor-calls';
import { SETTLEMENT_EXECUTOR_ARTIFACT } from './settlement-executor-artifact';
import { constructorArguments, EXECUTOR_TARGET_SLOTS, targetsOf } from './executor-targets';

/** What the executor a network's treasury delegates to must hold. */
export interface ExecutorConfig {
  chainId: number;
  token: string;
  /**
   * The contracts an item may call besides the token, by the executor's immutable naming each
   * (EXECUTOR_TARGET_SLOTS): the payment mechanisms' (`executorTargets` of @facilitator/payment-mechanisms,
   * which may name the token too: `token` is this config's). This package names no mechanism (issue 42).
   */
  targets: Readonly<Record<string, string>>;
  treasury: string;
  fee: bigint;
  /** the relayer keys' addresses, exactly (a key no longer configured must not keep the right to drive it) */
  relayers: readonly string[];
}

export type ExecutorStatus =
  | { state: 'ready'; executor: string; /** the relayers the executor names (checksummed) */ relayers: string[] }
  | { state: 'not_delegated'; why: string }
  | { state: 'wrong_delegate'; executor: string; why: string };

/**
 * How the executor's relayers must compare with the configured ones. `exact` (setting up, the CLI): a key no
 * longer configured must not keep the right to drive it. `some` (a running worker): it settles with the
 * relayers both name, so keys can be added and retired one step at a time while settlements run (docs/custody.md,
 * "Rotating relayer keys").
 */
type RelayerMatch = 'exact' | 'some';

/**
 * Whether the atomic path can run on a network: the treasury delegates (EIP-7702) to a contract whose
 * code is the committed executor and whose immutables are this configuration.
 */
export async function executorStatus(provider: Provider, config: ExecutorConfig, relayerMatch: RelayerMatch = 'exact'): Promise<ExecutorStatus> {
  const treasuryCode = await provider.getCode(config.treasury);
  const executor = delegateOf(treasuryCode);
  if (!executor) {
    return { state: 'not_delegated', why: treasuryCode === '0x' ? 'the treasury has no delegation' : 'the treasury is a contract, not a delegating EOA' };
  }
  const code = await provider.getCode(executor);
  if (!isExecutorCode(code)) {
    // an executor of an earlier version is never called: its items are not this one's; the treasury must delegate again
    const why = isEarlierExecutorCode(code)
      ? 'the treasury delegates to an earlier version of the settlement executor (its items call the token only): run `executor setup` to deploy the current one and delegate to it'
      : 'the treasury delegates to code that is not the settlement executor';
    return { state: 'wrong_delegate', executor, why };
  }
  const have = await executorImmutables(provider, executor);
  const mismatch = configMismatch(config, have, relayerMatch);
  return mismatch ? { state: 'wrong_delegate', executor, why: mismatch } : { state: 'ready', executor, relayers: have.relayers.map((a) => getAddress(a)) };
}

/**
 * Why the contract at `executor` is not a settlement executor holding this configuration (token, targets,
 * treasury, fee, relayers); undefined when it is. Checked before the treasury is asked to delegate to it: a contract
 * named by someone else (a compromised server's request) must never get the treasury's authorization.
 */
export async function executorConfigProblem(provider: Provider, executor: string, config: ExecutorConfig): Promise<string | undefined> {
  if (!isExecutorCode(await provider.getCode(executor))) return `${getAddress(executor)} does not run the settlement executor`;
  return configMismatch(config, await executorImmutables(provider, executor), 'exact');
}

interface ExecutorImmutables {
  token: string;
  /** by slot (EXECUTOR_TARGET_SLOTS) */
  targets: Record<string, string>;
  treasury: string;
  fee: bigint;
  relayers: string[];
}

async function executorImmutables(provider: Provider, executor: string): Promise<ExecutorImmutables> {
  const contract = new Contract(executor, executorInterface, provider);
  const [token, treasury, fee, relayers, ...targets] = (await Promise.all([
    contract.token(),
    contract.treasury(),
    contract.fee(),
    contract.relayers(),
    ...EXECUTOR_TARGET_SLOTS.map((slot) => contract.getFunction(slot)()),
  ])) as [string, string, bigint, string[], ...string[]];
  return { token, targets: Object.fromEntries(EXECUTOR_TARGET_SLOTS.map((slot, i) => [slot, targets[i]])), treasury, fee, relayers: [...relayers] };
}

function configMismatch(want: ExecutorConfig, have: ExecutorImmutables, relayerMatch: RelayerMatch): string | undefined {
  if (getAddress(have.token) !== getAddress(want.token)) return `the executor's token is ${have.token}, configured ${want.token}`;
  const targets = targetsOf(want.targets);
  for (const slot of EXECUTOR_TARGET_SLOTS) {
    if (getAddress(have.targets[slot]) !== targets[slot]) return `the executor's ${slot} is ${have.targets[slot]}, configured ${targets[slot]}`;
  }
  if (getAddress(have.treasury) !== getAddress(want.treasury)) return `the executor's treasury is ${have.treasury}, configured ${want.treasury}`;
  if (have.fee !== want.fee) return `the executor's fee is ${have.fee}, configured ${want.fee}`;
  const set = (list: readonly string[]) => [...new Set(list.map((a) => getAddress(a)))].sort();
  const named = set(have.relayers);
  const configured = set(want.relayers);
  const relayersDiffer = relayerMatch === 'exact' ? named.join(',') !== configured.join(',') : !configured.some((a) => named.includes(a));
  if (relayersDiffer) {
    const how = relayerMatch === 'exact' ? '' : ' (none of them)';
    return `the executor's relayers are [${have.relayers.join(', ')}], configured [${want.relayers.join(', ')}]${how}`;
  }
  return undefined;
}

export type SetupProgress =
  | { step: 'checked'; status: ExecutorStatus }
  | { step: 'deploying'; hash: string }
  | { step: 'deployed'; executor: string; receipt: TransactionReceipt }
  | { step: 'delegating'; hash: string; executor: string }
  | { step: 'delegated'; receipt: TransactionReceipt };

export interface ExecutorSetupKeys {
  /** signs the EIP-7702 authorization; only this key can change what the treasury's address runs */
  treasuryKey: string;
  /** pays for the deployment and sends the type-4 transaction (a relayer; may be the treasury itself) */
  senderKey: string;
}

/**
 * What the treasury must sign to delegate to `executor` (EIP-7702), and the digest it signs: made on a
 * server that holds no treasury key (`executor setup --print-authorization`), signed where the key is
 * (`executor sign-authorization`, a hardware wallet, `cast wallet sign-auth`), submitted by a relayer.
 */
export interface DelegationRequest {
  chainId: number;
  /** the executor the treasury's address will run */
  address: string;
  /** the treasury's account nonce the authorization is good for (its next transaction's) */
  nonce: bigint;
  treasury: string;
  /** keccak256(0x05 ‖ rlp([chainId, address, nonce])): what the treasury's key signs */
  digest: string;
}

/** Deploys a settlement executor holding this configuration, paid by `sender`. */
export async function deployExecutor(
  config: ExecutorConfig,
  sender: Signer,
  onProgress: (progress: SetupProgress) => void = () => undefined,
): Promise<string> {
  const factory = new ContractFactory(SETTLEMENT_EXECUTOR_ARTIFACT.abi as never, SETTLEMENT_EXECUTOR_ARTIFACT.bytecode, sender);
  const args = constructorArguments({ ...targetsOf(config.targets), token: config.token, treasury: config.treasury, fee: config.fee, relayers: [...config.relayers] });
  const deployment = await factory.deploy(...args);
  const deployTx = deployment.deploymentTransaction()!;
  onProgress({ step: 'deploying', hash: deployTx.hash });
  const deployed = await mined(deployTx.wait(), 'executor deployment');
  const executor = await deployment.getAddress();
  onProgress({ step: 'deployed', executor, receipt: deployed });
  return executor;
}

/**
 * The authorization the treasury must sign for `executor`, for a type-4 transaction sent by another account
 * (the treasury's own next nonce): valid until the treasury sends anything else.
 */
export async function delegationRequest(provider: Provider, config: ExecutorConfig, executor: string): Promise<DelegationRequest> {
  const nonce = BigInt(await provider.getTransactionCount(config.treasury, 'pending'));
  const request = { chainId: BigInt(config.chainId), address: getAddress(executor), nonce };
  return { chainId: config.chainId, address: request.address, nonce, treasury: getAddress(config.treasury), digest: hashAuthorization(request) };
}

/** Why a signed authorization cannot delegate the treasury now; undefined when it can. */
async function delegationProblem(provider: Provider, config: ExecutorConfig, authorization: Authorization): Promise<string | undefined> {
  if (Number(authorization.chainId) !== config.chainId) return `the authorization is for chain ${authorization.chainId}, not ${config.chainId}`;
  const signer = verifyAuthorization(authorization, authorization.signature);
  if (signer !== getAddress(config.treasury)) return `the authorization is signed by ${signer}, not the treasury ${getAddress(config.treasury)}`;
  const nonce = BigInt(await provider.getTransactionCount(config.treasury, 'pending'));
  if (authorization.nonce !== nonce) return `the authorization is for the treasury's nonce ${authorization.nonce}, but its next nonce is ${nonce} (it sent a transaction since): print a new request`;
  return executorConfigProblem(provider, authorization.address, config);
}

/** Sends the treasury's signed authorization in a type-4 transaction from `sender`, then reads the status. */
export async function submitDelegation(
  provider: Provider,
  config: ExecutorConfig,
  sender: Signer,
  authorization: Authorization,
  onProgress: (progress: SetupProgress) => void = () => undefined,
): Promise<ExecutorStatus> {
  const problem = await delegationProblem(provider, config, authorization);
  if (problem) throw new Error(problem);
  const delegation = await sender.sendTransaction({ type: 4, to: config.treasury, authorizationList: [authorization] });
  onProgress({ step: 'delegating', hash: delegation.hash, executor: authorization.address });
  onProgress({ step: 'delegated', receipt: await mined(delegation.wait(), 'delegation') });
  return executorStatus(provider, config);
}

/**
 * Deploys an executor with this configuration and has the treasury delegate to it, unless it already
 * does. Idempotent: run again, it finds the delegation in place and sends nothing.
 */
export async function setUpExecutor(
  provider: Provider,
  config: ExecutorConfig,
  keys: ExecutorSetupKeys,
  onProgress: (progress: SetupProgress) => void = () => undefined,
): Promise<ExecutorStatus> {
  const before = await executorStatus(provider, config);
  onProgress({ step: 'checked', status: before });
  if (before.state === 'ready') return before;
  const treasury = new Wallet(keys.treasuryKey, provider);
  const sender = new Wallet(keys.senderKey, provider);
  if (treasury.address !== getAddress(config.treasury)) throw new Error(`the treasury key is for ${treasury.address}, not the configured treasury ${config.treasury}`);
  const executor = await deployExecutor(config, sender, onProgress);

  // sent by the sender, the authorization's nonce is the treasury's next one; sent by the treasury itself,
  // the transaction takes that nonce first and the authorization the one after
  const treasuryNonce = await provider.getTransactionCount(treasury.address, 'pending');
  const selfSent = sender.address === treasury.address;
  const authorization = await treasury.authorize({ address: executor, nonce: treasuryNonce + (selfSent ? 1 : 0), chainId: config.chainId });
  if (!selfSent) return submitDelegation(provider, config, sender, authorization, onProgress);
  const delegation = await sender.sendTransaction({ type: 4, to: treasury.address, authorizationList: [authorization] });
  onProgress({ step: 'delegating', hash: delegation.hash, executor });
  onProgress({ step: 'delegated', receipt: await mined(delegation.wait(), 'delegation') });
  return executorStatus(provider, config);
}

async function mined(wait: Promise<TransactionReceipt | null>, what: string): Promise<TransactionReceipt> {
  const receipt = await wait;
  if (!receipt || receipt.status !== 1) throw new Error(`the ${what} transaction failed`);
  return receipt;
}
