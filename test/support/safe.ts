// Safe 1.4.1 (npm @safe-global/safe-contracts) on anvil: singleton, proxy factory and fallback handler,
// and a Safe of one owner, for contract-wallet payers and merchants.
import { BaseWallet, AbiCoder, Contract, ContractFactory, getBytes, Interface, Signature, Wallet, ZeroAddress, type JsonRpcProvider } from 'ethers';

const ARTIFACTS = '@safe-global/safe-contracts/build/artifacts/contracts';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const artifact = (p: string) => require(`${ARTIFACTS}/${p}`) as { abi: unknown[]; bytecode: string };

export interface SafeDeployment {
  singleton: string;
  factory: Contract;
  fallbackHandler: Contract;
}

async function deployArtifact(provider: JsonRpcProvider, deployerKey: string, p: string): Promise<Contract> {
  const a = artifact(p);
  const contract = await new ContractFactory(a.abi as never, a.bytecode, new Wallet(deployerKey, provider)).deploy();
  await contract.waitForDeployment();
  return contract as Contract;
}

export async function deploySafeContracts(provider: JsonRpcProvider, deployerKey: string): Promise<SafeDeployment> {
  const singleton = await deployArtifact(provider, deployerKey, 'Safe.sol/Safe.json');
  const factory = await deployArtifact(provider, deployerKey, 'proxies/SafeProxyFactory.sol/SafeProxyFactory.json');
  const fallbackHandler = await deployArtifact(provider, deployerKey, 'handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json');
  return { singleton: await singleton.getAddress(), factory, fallbackHandler };
}

/** A deployed Safe with one owner and threshold 1, answering ERC-1271 through its fallback handler. */
export async function createSafe(deployment: SafeDeployment, owner: string, saltNonce: bigint): Promise<string> {
  const safe = new Interface(artifact('Safe.sol/Safe.json').abi as never);
  const initializer = safe.encodeFunctionData('setup', [
    [owner], 1, ZeroAddress, '0x', await deployment.fallbackHandler.getAddress(), ZeroAddress, 0, ZeroAddress,
  ]);
  const tx = await deployment.factory.createProxyWithNonce(deployment.singleton, initializer, saltNonce);
  const receipt = await tx.wait();
  for (const log of receipt.logs) {
    try {
      const parsed = deployment.factory.interface.parseLog(log);
      if (parsed?.name === 'ProxyCreation') return (parsed.args[0] as string).toLowerCase();
    } catch {
      // another contract's log
    }
  }
  throw new Error('no ProxyCreation event');
}

/**
 * An owner's signature of `digest` for the Safe's ERC-1271 check, eth_sign style: the owner signs the
 * SafeMessage hash as a personal message and v is raised by 4 (31 or 32), as Safe defines that kind.
 */
export async function safeEthSignSignature(deployment: SafeDeployment, safe: string, owner: BaseWallet, digest: string): Promise<string> {
  const messageHash = (await deployment.fallbackHandler.getMessageHashForSafe(safe, AbiCoder.defaultAbiCoder().encode(['bytes32'], [digest]))) as string;
  const signature = Signature.from(await owner.signMessage(getBytes(messageHash)));
  return signature.r + signature.s.slice(2) + (signature.v + 4).toString(16).padStart(2, '0');
}
