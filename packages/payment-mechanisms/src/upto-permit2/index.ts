import { tokenSignature } from '@facilitator/evm-chain';
import { getAddress } from 'ethers';
import type { MechanismChain } from '../chain-port';
import type { DirectCall, ParsedPayment, PaymentMechanism, SettleOrder } from '../mechanism';
import { X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import { permit2Fingerprint } from '../permit2/fingerprint';
import { permitWitnessDigest, structHash } from '../permit2/eip712';
import { storedExtensionsOf, storedPermit2Transfer } from '../permit2/payload';
import { permitToSend } from '../permit2/terms';
import { permit2ProxyMembers } from '../permit2/proxy-mechanism';
import { permit2PaymentOf } from '../permit2/terms';
import { amountToSettle } from '../settle-amount';
import { UPTO_PERMIT2_X402_REASONS } from './reasons';
import { isUptoPermit2Payload, parseUptoPermit2, type UptoPermit2Payload } from './parse';
import { uptoPermit2PayloadMarker, uptoPermit2PayloadSchema } from './payload-schema';
import { EIP2612_GAS_SPONSORING_EXTENSION } from '../permit2/eip2612-extension';
import { UPTO_PROXY } from './proxy';
import { uptoSettleCalldata } from './proxy-calldata';
import { UPTO_PERMIT2 } from '../mechanism-ids';

/** The upto proxy's witness, as `@x402/evm`'s client signs it: the recipient, the one sender, the first second. */
const WITNESS_TYPE = 'Witness(address to,address facilitator,uint256 validAfter)';

/**
 * `upto` through Permit2: the payer signs, under Permit2's domain, a transfer of at most a maximum of a token
 * that x402's upto proxy may move, with a witness binding the recipient, the facilitator (the only address
 * whose call the proxy accepts) and a start time. The merchant later settles an amount up to the maximum;
 * the proxy's settle takes it as an argument, and Permit2 spends the nonce whatever the amount, so the rest
 * of the maximum can never be taken. Nonces, approvals (verify holds the maximum against the payer's
 * allowance to Permit2) and recovery are Permit2's, as for exact.
 *
 * Its terms name the witness's facilitator as their only `sender`: verification refuses a payment naming any
 * address but the one this service executes from (the treasury, which `/x402/supported` advertises as
 * `extra.facilitatorAddress`), and settlement sends its call from it (docs/decisions.md, "`upto` served").
 */
export const uptoPermit2: PaymentMechanism<UptoPermit2Payload> = {
  ...permit2ProxyMembers(
    UPTO_PROXY,
    (p, separator) => permitWitnessDigest(separator, p, WITNESS_TYPE, structHash(WITNESS_TYPE, [{ address: p.to }, { address: p.facilitator }, { uint: p.validAfter }])),
    uptoProxyCall,
  ),

  id: UPTO_PERMIT2,
  family: 'evm',
  scheme: 'upto',
  claims: isUptoPermit2Payload,
  parse: (payload, path, _network, extensions) => parsedOf(parseUptoPermit2(payload, path, extensions)),
  toStored: (p) => storedPermit2Transfer(p, { facilitator: p.facilitator }),
  fromStored: (stored) => parsedOf(parseUptoPermit2(stored, '', storedExtensionsOf(stored))),
  fingerprint: (p, network) => permit2Fingerprint(UPTO_PERMIT2, p, network, [p.facilitator]),
  // terms.amount is the maximum: the merchant names the amount at settle
  signedAmount: 'maximum',
  x402Versions: [2],
  payloadSchema: uptoPermit2PayloadSchema,
  payloadMarker: uptoPermit2PayloadMarker,
  x402: { reasons: UPTO_PERMIT2_X402_REASONS, extensions: [EIP2612_GAS_SPONSORING_EXTENSION] },
  // the sender clients must name in the witness, as the reference's getExtra gives it (checksummed)
  describe: (_network, facilitator) => ({ scheme: 'upto', extra: { facilitatorAddress: getAddress(facilitator) } }),
};

/** the upto proxy's settle call: the amount the merchant names, at most the permitted one, from the witness's facilitator */
function uptoProxyCall(payment: ParsedPayment<UptoPermit2Payload>, _chain: MechanismChain, settle?: SettleOrder): DirectCall {
  const amount = amountToSettle(uptoPermit2, payment.terms, settle);
  const permit = permitToSend(payment.payload, settle);
  return {
    to: X402_UPTO_PERMIT2_PROXY,
    // Permit2 knows nothing of ERC-6492: the wallet, deployed first, checks its own signature
    data: uptoSettleCalldata(payment.payload, amount, tokenSignature(payment.payload.signature), permit),
    gasKind: permit ? 'x402UptoPermit2Proxy.settleWithPermit' : 'x402UptoPermit2Proxy.settle',
    // the proxy reverts (UnauthorizedFacilitator) a call from anyone but the witness's facilitator
    sender: payment.terms.sender,
  };
}

const parsedOf = (p: UptoPermit2Payload) => permit2PaymentOf(UPTO_PERMIT2, 'upto', p, p.facilitator);

export { type UptoPermit2Payload } from './parse';
