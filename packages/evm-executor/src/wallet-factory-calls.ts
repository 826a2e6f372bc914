import { Interface } from 'ethers';

const SAFE_FACTORY = new Interface([
  'function createProxyWithNonce(address _singleton, bytes initializer, uint256 saltNonce)',
  'function createChainSpecificProxyWithNonce(address _singleton, bytes initializer, uint256 saltNonce)',
  'function createProxyWithCallback(address _singleton, bytes initializer, uint256 saltNonce, address callback)',
]);
const COINBASE_FACTORY = new Interface(['function createAccount(bytes[] owners, uint256 nonce)', 'function implementation() view returns (address)']);

/** `implementation()` of the Coinbase Smart Wallet factory (an immutable of the factory). */
export const IMPLEMENTATION_VIEW = COINBASE_FACTORY.encodeFunctionData('implementation');

type FactoryCallImplementation =
  /** the singleton a Safe proxy factory is asked to point the new proxy at */
  | { implementation: string }
  /** a factory that always deploys its own implementation (Coinbase Smart Wallet): read it from the factory */
  | { ofFactory: true }
  /** a call we do not know: we cannot tell what it would deploy */
  | { unknown: string };

/**
 * What an ERC-6492 factory call would deploy. Safe's proxy factory takes any singleton as an argument, so
 * the argument is what must be allow-listed; Coinbase's factory deploys the implementation it was built with.
 */
export function implementationOfFactoryCall(calldata: string): FactoryCallImplementation {
  const selector = calldata.slice(0, 10).toLowerCase();
  for (const fn of ['createProxyWithNonce', 'createChainSpecificProxyWithNonce', 'createProxyWithCallback']) {
    if (SAFE_FACTORY.getFunction(fn)!.selector !== selector) continue;
    try {
      return { implementation: (SAFE_FACTORY.decodeFunctionData(fn, calldata)[0] as string).toLowerCase() };
    } catch {
      return { unknown: `malformed ${fn} call` };
    }
  }
  if (COINBASE_FACTORY.getFunction('createAccount')!.selector === selector) return { ofFactory: true };
  return { unknown: `factory call ${selector} is not one we know (Safe createProxyWithNonce, Coinbase createAccount)` };
}

/** The address an `implementation()` view answered, lowercase; undefined when it is not one. */
export function decodeImplementation(returned: string): string | undefined {
  try {
    return (COINBASE_FACTORY.decodeFunctionResult('implementation', returned)[0] as string).toLowerCase();
  } catch {
    return undefined;
  }
}
