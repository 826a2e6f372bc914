import { AbiCoder } from 'ethers';

/** ERC-6492's suffix: a signature ending in these 32 bytes wraps a factory call and the wallet's own signature. */
const ERC6492_MAGIC_SUFFIX = '6492649264926492649264926492649264926492649264926492649264926492';

export interface Erc6492Signature {
  /** lowercase */
  factory: string;
  factoryCalldata: string;
  /** what the wallet checks once deployed (and what the token is given) */
  innerSignature: string;
}

export function isErc6492Signature(signature: string): boolean {
  return signature.length > 66 && signature.toLowerCase().endsWith(ERC6492_MAGIC_SUFFIX);
}

/** The parts of an ERC-6492 signature; undefined when it is not one or its body is not abi.encode(address, bytes, bytes). */
export function parseErc6492Signature(signature: string): Erc6492Signature | undefined {
  if (!isErc6492Signature(signature)) return undefined;
  try {
    const body = signature.slice(0, signature.length - ERC6492_MAGIC_SUFFIX.length);
    const [factory, factoryCalldata, innerSignature] = AbiCoder.defaultAbiCoder().decode(['address', 'bytes', 'bytes'], body);
    return { factory: (factory as string).toLowerCase(), factoryCalldata: factoryCalldata as string, innerSignature: innerSignature as string };
  } catch {
    return undefined;
  }
}

export function wrapErc6492Signature(factory: string, factoryCalldata: string, innerSignature: string): string {
  return AbiCoder.defaultAbiCoder().encode(['address', 'bytes', 'bytes'], [factory, factoryCalldata, innerSignature]) + ERC6492_MAGIC_SUFFIX;
}

/** The signature the token must be given: the inner one for an ERC-6492 signature, otherwise as is. */
export function tokenSignature(signature: string): string {
  return parseErc6492Signature(signature)?.innerSignature ?? signature;
}
