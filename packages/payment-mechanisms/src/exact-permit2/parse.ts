import { parsePermit2Transfer, permit2WitnessOf, type Permit2Transfer } from '../permit2/payload';

/**
 * An exact payload through Permit2, normalized: the permit for x402's exact proxy, whose witness is the
 * recipient and the first second (`Witness(address to,uint256 validAfter)`), nothing more.
 */
export type ExactPermit2Payload = Permit2Transfer;

/** Reads an exact Permit2 payload field by field, naming the path of the first that is not what it must be. */
export function parseExactPermit2(payload: unknown, path: string, extensions?: unknown): ExactPermit2Payload {
  return parsePermit2Transfer(payload, path, () => ({}), extensions);
}

/** The shape test: a Permit2 authorization whose witness names no facilitator (that one is `upto`'s). */
export function isExactPermit2Payload(payload: unknown): boolean {
  const witness = permit2WitnessOf(payload);
  return witness !== undefined && !('facilitator' in witness);
}
