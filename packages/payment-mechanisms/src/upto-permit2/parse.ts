import { addressAt, parsePermit2Transfer, permit2WitnessOf, type Permit2Transfer } from '../permit2/payload';

/**
 * An upto payload through Permit2, normalized: the permit of a maximum for x402's upto proxy, whose witness
 * also names the facilitator, the only sender the proxy accepts
 * (`Witness(address to,address facilitator,uint256 validAfter)`).
 */
export interface UptoPermit2Payload extends Permit2Transfer {
  /** lowercase: the only address that may send the proxy's settle for this permit */
  facilitator: string;
}

/** Reads an upto Permit2 payload field by field, naming the path of the first that is not what it must be. */
export function parseUptoPermit2(payload: unknown, path: string, extensions?: unknown): UptoPermit2Payload {
  return parsePermit2Transfer(payload, path, (witness, at) => ({ facilitator: addressAt(witness.facilitator, `${at}/facilitator`) }), extensions);
}

/** The shape test: a Permit2 authorization whose witness names a facilitator (exact's never does). */
export function isUptoPermit2Payload(payload: unknown): boolean {
  const witness = permit2WitnessOf(payload);
  return witness !== undefined && 'facilitator' in witness;
}
