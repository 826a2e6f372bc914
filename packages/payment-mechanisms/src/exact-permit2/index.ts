import { tokenSignature } from '@facilitator/evm-chain';
import type { MechanismChain } from '../chain-port';
import type { DirectCall, ParsedPayment, PaymentMechanism, SettleOrder } from '../mechanism';
import { X402_EXACT_PERMIT2_PROXY } from '../permit2/addresses';
import { permit2Fingerprint } from '../permit2/fingerprint';
import { permitWitnessDigest, structHash } from '../permit2/eip712';
import { storedExtensionsOf, storedPermit2Transfer } from '../permit2/payload';
import { permitToSend } from '../permit2/terms';
import { permit2ProxyMembers } from '../permit2/proxy-mechanism';
import { permit2PaymentOf } from '../permit2/terms';
import { amountToSettle } from '../settle-amount';
import { EXACT_PERMIT2_X402_REASONS } from './reasons';
import { isExactPermit2Payload, parseExactPermit2, type ExactPermit2Payload } from './parse';
import { exactPermit2PayloadMarker, exactPermit2PayloadSchema } from './payload-schema';
import { EIP2612_GAS_SPONSORING_EXTENSION } from '../permit2/eip2612-extension';
import { EXACT_PROXY } from './proxy';
import { settleCalldata } from './proxy-calldata';
import { EXACT_PERMIT2 } from '../mechanism-ids';

/** The exact proxy's witness: the recipient and the first second the payment may move. */
const WITNESS_TYPE = 'Witness(address to,uint256 validAfter)';

/**
 * `exact` through Permit2 (`extra.assetTransferMethod: "permit2"`): the payer signs, under Permit2's domain,
 * a transfer of an exact amount of a token that x402's exact proxy may move, with a witness binding the
 * recipient and a start time; Permit2 consumes an unordered nonce of the payer's, shared by every token and
 * every spender. The payer has approved Permit2 for the token once (or sends an EIP-2612 permit for it).
 *
 * Served on every network, on both paths: the atomic path's executor (v2) calls the proxy's settle in the
 * fee's own item; the sequential path sends the fee from the treasury's key first, then the proxy's call
 * from a relayer.
 */
export const exactPermit2: PaymentMechanism<ExactPermit2Payload> = {
  ...permit2ProxyMembers(
    EXACT_PROXY,
    (p, separator) => permitWitnessDigest(separator, p, WITNESS_TYPE, structHash(WITNESS_TYPE, [{ address: p.to }, { uint: p.validAfter }])),
    exactProxyCall,
  ),
  id: EXACT_PERMIT2,
  family: 'evm',
  scheme: 'exact',
  claims: isExactPermit2Payload,
  parse: (payload, path, _network, extensions) => parsedOf(parseExactPermit2(payload, path, extensions)),
  toStored: (p) => storedPermit2Transfer(p),
  fromStored: (stored) => parsedOf(parseExactPermit2(stored, '', storedExtensionsOf(stored))),
  fingerprint: (p, network) => permit2Fingerprint(EXACT_PERMIT2, p, network),
  signedAmount: 'exact',
  // x402 v1 payloads are EIP-3009's
  x402Versions: [2],
  payloadSchema: exactPermit2PayloadSchema,
  payloadMarker: exactPermit2PayloadMarker,
  x402: { reasons: EXACT_PERMIT2_X402_REASONS, extensions: [EIP2612_GAS_SPONSORING_EXTENSION] },
  describe: () => ({ scheme: 'exact' }),
};

/** the exact proxy's settle call: it moves the permitted amount whole */
function exactProxyCall(payment: ParsedPayment<ExactPermit2Payload>, _chain: MechanismChain, settle?: SettleOrder): DirectCall {
  // the exact proxy moves the permitted amount whole: an order for any other amount is refused
  amountToSettle(exactPermit2, payment.terms, settle);
  const permit = permitToSend(payment.payload, settle);
  return {
    to: X402_EXACT_PERMIT2_PROXY,
    // Permit2 knows nothing of ERC-6492: the wallet, deployed first, checks its own signature
    data: settleCalldata(payment.payload, tokenSignature(payment.payload.signature), permit),
    gasKind: permit ? 'x402ExactPermit2Proxy.settleWithPermit' : 'x402ExactPermit2Proxy.settle',
  };
}

const parsedOf = (p: ExactPermit2Payload) => permit2PaymentOf(EXACT_PERMIT2, 'exact', p);

export { type ExactPermit2Payload } from './parse';
