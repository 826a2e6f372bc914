import { InvalidRequestError } from '@facilitator/core';
import { Wallet } from 'ethers';
import { exactEip3009 } from '.';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from './eip712';
import { authorizationFingerprint } from './fingerprint';
import { EXACT_EIP3009 } from '../mechanism-ids';

const network = { chainId: 84532, tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' };
const domain = { name: 'USDC', version: '2', chainId: network.chainId, verifyingContract: network.tokenAddress };

async function signed() {
  const payer = Wallet.createRandom();
  const authorization = { from: payer.address, to: '0x' + 'AB'.repeat(20), value: '10000', validAfter: '0', validBefore: '1900000000', nonce: '0x' + 'EF'.repeat(32) };
  const signature = await payer.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, authorization);
  return { payer, body: { authorization, signature: signature.toUpperCase().replace('0X', '0x') } };
}

// Claims, the digest and recovery round trip, storage's identity, the direct call's amounts and paid-in are
// the conformance suite's (src/conformance.test.ts), run over every mechanism: here, what is EIP-3009's own.
describe('exact through EIP-3009', () => {
  it('reads a payload into scheme-neutral terms: lowercase, bigint, the nonce in the token\'s space', async () => {
    const { payer, body } = await signed();
    const parsed = exactEip3009.parse(body, '/payload', network);
    expect(parsed.terms).toEqual({
      mechanism: EXACT_EIP3009,
      scheme: 'exact',
      payer: payer.address.toLowerCase(),
      payee: '0x' + 'ab'.repeat(20),
      token: network.tokenAddress,
      amount: 10000n,
      validAfter: 0n,
      validBefore: 1900000000n,
      nonce: { space: network.tokenAddress, payer: payer.address.toLowerCase(), value: '0x' + 'ef'.repeat(32) },
    });
    expect(parsed.signature).toBe(body.signature.toLowerCase());
  });

  it('names the path of a number that is not a uint256', async () => {
    const { body } = await signed();
    const bad = { ...body, authorization: { ...body.authorization, validBefore: '1e9' } };
    expect(() => exactEip3009.parse(bad, '/payment/payload', network)).toThrow(InvalidRequestError);
    try {
      exactEip3009.parse(bad, '/payment/payload', network);
    } catch (err) {
      expect((err as InvalidRequestError).details).toMatchObject({ errors: [{ path: '/payment/payload/authorization/validBefore' }] });
    }
  });

  it('fingerprints the payment as the settle intake and the migration do (byte-identical)', async () => {
    const { body } = await signed();
    const parsed = exactEip3009.parse(body, '/payload', network);
    expect(exactEip3009.fingerprint(parsed.payload, network)).toBe(authorizationFingerprint(network.chainId, network.tokenAddress, parsed.payload.authorization));
  });

  it('stores the payload as JSON of strings and reads it back unchanged, with its terms, in the shape the migration backfills', async () => {
    const { body } = await signed();
    const parsed = exactEip3009.parse(body, '/payload', network);
    const stored = exactEip3009.toStored(parsed.payload);
    // through JSON, as a jsonb column keeps it: no bigint, nothing lost
    const roundTrip = JSON.parse(JSON.stringify(stored));
    expect(roundTrip).toEqual({
      authorization: { ...body.authorization, from: body.authorization.from.toLowerCase(), to: body.authorization.to.toLowerCase(), nonce: body.authorization.nonce.toLowerCase() },
      signature: body.signature.toLowerCase(),
    });
    // read back with its terms, as settlement reads it
    expect(exactEip3009.fromStored(roundTrip, network)).toEqual(parsed);
  });
});
