import { AbiCoder } from 'ethers';
import { ERC6492_CHECK_BYTECODE } from './erc6492-check-bytecode';
import type { Erc6492Signature } from './erc6492-signature';

/** What a counterfactual wallet would say about a signature once its factory deployed it. */
type CounterfactualVerdict = 'accepted' | 'refused' | 'not_deployed';

/**
 * The eth_call that asks it: the Erc6492Check creation code with its constructor arguments, run as a call
 * with no `to`. Nothing is deployed: the factory call and the wallet exist only inside the simulation.
 */
export function counterfactualCheckCall(signer: string, digest: string, wrapped: Erc6492Signature): { data: string } {
  const args = AbiCoder.defaultAbiCoder().encode(
    ['address', 'bytes32', 'address', 'bytes', 'bytes'],
    [signer, digest, wrapped.factory, wrapped.factoryCalldata, wrapped.innerSignature],
  );
  return { data: ERC6492_CHECK_BYTECODE + args.slice(2) };
}

export function counterfactualVerdict(result: string): CounterfactualVerdict {
  const word = BigInt(result === '0x' ? 0 : result.slice(0, 66));
  return word === 1n ? 'accepted' : word === 2n ? 'not_deployed' : 'refused';
}
