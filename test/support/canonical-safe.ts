// Safe 1.4.1 (npm @safe-global/safe-contracts) placed at its canonical addresses on anvil with
// anvil_setCode, so the facilitator's default ERC-6492 factory allowlist applies as on Base; plus what a
// counterfactual Safe payer needs: its address, its factory call and an owner's signature.
import { AbiCoder, Contract, Interface, TypedDataEncoder, ZeroAddress, type BaseWallet, type JsonRpcProvider } from 'ethers';
import { wrapErc6492Signature } from '@facilitator/evm-chain';
import { type Eip712Domain, type TransferAuthorization } from '@facilitator/core';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '@facilitator/payment-mechanisms';

const ARTIFACTS = '@safe-global/safe-contracts/build/artifacts/contracts';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const artifact = (p: string) => require(`${ARTIFACTS}/${p}`) as { abi: unknown[]; deployedBytecode: string };

/** The canonical Safe 1.4.1 deployment addresses (safe-global/safe-deployments), the same on every chain. */
export const CANONICAL_SAFE = {
  singleton: '0x41675C099F32341bf84BFc5382aF534df5C7461a',
  factory: '0x4e1DCf7AD4e460CfD30791CCC4F9c8a4f820ec67',
  fallbackHandler: '0xfd0732Dc9E303f09fCEf3a7388Ad10A83459Ec99',
} as const;

const safeInterface = new Interface(artifact('Safe.sol/Safe.json').abi as never);
const factoryInterface = new Interface(artifact('proxies/SafeProxyFactory.sol/SafeProxyFactory.json').abi as never);

/** None of the three has immutables or needs constructor state for proxies, so their runtime code is enough. */
export async function placeCanonicalSafe(provider: JsonRpcProvider): Promise<void> {
  const place = (address: string, p: string) => provider.send('anvil_setCode', [address, artifact(p).deployedBytecode]);
  await place(CANONICAL_SAFE.singleton, 'Safe.sol/Safe.json');
  await place(CANONICAL_SAFE.factory, 'proxies/SafeProxyFactory.sol/SafeProxyFactory.json');
  await place(CANONICAL_SAFE.fallbackHandler, 'handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json');
}

export interface CounterfactualSafe {
  /** lowercase */
  address: string;
  /** createProxyWithNonce(singleton, setup(owner), saltNonce) on the canonical factory */
  factoryCalldata: string;
}

/** A one-owner Safe that the canonical factory would deploy for this call, without deploying it. */
export async function counterfactualSafe(provider: JsonRpcProvider, owner: string, saltNonce: bigint): Promise<CounterfactualSafe> {
  const initializer = safeInterface.encodeFunctionData('setup', [[owner], 1, ZeroAddress, '0x', CANONICAL_SAFE.fallbackHandler, ZeroAddress, 0, ZeroAddress]);
  const factoryCalldata = factoryInterface.encodeFunctionData('createProxyWithNonce', [CANONICAL_SAFE.singleton, initializer, saltNonce]);
  const result = await provider.call({ to: CANONICAL_SAFE.factory, data: factoryCalldata });
  const [address] = factoryInterface.decodeFunctionResult('createProxyWithNonce', result);
  return { address: (address as string).toLowerCase(), factoryCalldata };
}

/** Deploys the Safe through the canonical factory (sent by `sender`). */
export async function deployCounterfactualSafe(sender: BaseWallet, safe: CounterfactualSafe): Promise<void> {
  const factory = new Contract(CANONICAL_SAFE.factory, factoryInterface, sender);
  await (await sender.sendTransaction({ to: await factory.getAddress(), data: safe.factoryCalldata })).wait();
}

/** The EIP-712 digest USDC checks for this authorization. */
export function authorizationDigest(domain: Eip712Domain, authorization: TransferAuthorization): string {
  return TypedDataEncoder.hash(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, authorization);
}

/**
 * An owner's signature the Safe accepts through CompatibilityFallbackHandler.isValidSignature(bytes32,bytes):
 * an ordinary EIP-712 signature (v 27/28) of SafeMessage(abi.encode(digest)) under the Safe's own domain.
 * Computed offline: the Safe need not exist.
 */
export function safeOwnerSignature(owner: BaseWallet, chainId: number, safe: string, digest: string): Promise<string> {
  return owner.signTypedData(
    { chainId, verifyingContract: safe },
    { SafeMessage: [{ name: 'message', type: 'bytes' }] },
    { message: AbiCoder.defaultAbiCoder().encode(['bytes32'], [digest]) },
  );
}

/** The ERC-6492 signature of a counterfactual Safe: its factory call and the owner's signature. */
export function counterfactualSafeSignature(safe: CounterfactualSafe, innerSignature: string): string {
  return wrapErc6492Signature(CANONICAL_SAFE.factory, safe.factoryCalldata, innerSignature);
}
