import { bytesToHex, InvalidRequestError } from '@facilitator/core';
import { TypedDataEncoder, Wallet } from 'ethers';
import { permit2WitnessTypes } from '@x402/evm';
import { exactPermit2 } from '.';
import { PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY } from '../permit2/addresses';
import { permit2DomainSeparator } from '../permit2/eip712';
import { ethersTypes, otherPermit2Forms, permit2Domain, signPermit2 } from '../testing/permit2-signing';
import { EXACT_PERMIT2 } from '../mechanism-ids';

const network = { chainId: 84532, tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' };
const domain = permit2Domain(network.chainId);
// as @x402/evm's client makes it: a random 256-bit nonce in decimal
const NONCE = '33247007178036348590600198031289925668252061821958005840077069883511451257277';
const types = ethersTypes(permit2WitnessTypes);

async function signed() {
  const payer = Wallet.createRandom();
  const message = {
    permitted: { token: network.tokenAddress, amount: '10000' },
    spender: X402_EXACT_PERMIT2_PROXY,
    nonce: NONCE,
    deadline: '1900000000',
    witness: { to: '0x' + 'AB'.repeat(20), validAfter: '1740672089' },
  };
  const signature = await signPermit2(payer, network.chainId, permit2WitnessTypes, message);
  const body = { permit2Authorization: { from: payer.address, ...message }, signature };
  return { payer, message, body };
}

describe('exact through Permit2', () => {
  it('reads the payload into terms: the nonce in Permit2\'s space as bytes32, validity as the proxy and Permit2 apply it', async () => {
    const { payer, body } = await signed();
    const parsed = exactPermit2.parse(body, '/payload', network);
    expect(parsed.terms).toEqual({
      mechanism: EXACT_PERMIT2,
      scheme: 'exact',
      payer: payer.address.toLowerCase(),
      payee: '0x' + 'ab'.repeat(20),
      token: network.tokenAddress,
      spender: X402_EXACT_PERMIT2_PROXY,
      amount: 10000n,
      // usable when validAfter < now < validBefore: from the witness's second on, to the deadline included
      validAfter: 1740672088n,
      validBefore: 1900000001n,
      nonce: { space: PERMIT2_ADDRESS, payer: payer.address.toLowerCase(), value: '0x' + BigInt(NONCE).toString(16).padStart(64, '0') },
    });
  });

  it('hashes what @x402/evm\'s client signs, and recovers its signer as Permit2 does', async () => {
    const { payer, message, body } = await signed();
    const parsed = exactPermit2.parse(body, '/payload', network);
    const digest = exactPermit2.signature!.signedDigest(parsed.payload, permit2DomainSeparator(network.chainId));
    expect(bytesToHex(digest)).toBe(TypedDataEncoder.hash(domain, types, message));
    expect(bytesToHex(permit2DomainSeparator(network.chainId))).toBe(TypedDataEncoder.hashDomain(domain));
    expect(exactPermit2.signature!.recoverSigner(digest, parsed.signature)).toEqual({ ok: true, address: payer.address.toLowerCase() });

    // Permit2 also takes the 64-byte EIP-2098 form and a high-s twin (ecrecover has no rule on s; USDC does)
    const { compact, highS } = otherPermit2Forms(body.signature);
    expect(exactPermit2.signature!.recoverSigner(digest, compact)).toEqual({ ok: true, address: payer.address.toLowerCase() });
    expect(exactPermit2.signature!.recoverSigner(digest, highS)).toEqual({ ok: true, address: payer.address.toLowerCase() });

    // another recipient is another digest: the signature does not recover the payer
    const redirected = exactPermit2.signature!.signedDigest({ ...parsed.payload, to: '0x' + '77'.repeat(20) }, permit2DomainSeparator(network.chainId));
    expect(exactPermit2.signature!.recoverSigner(redirected, parsed.signature)).not.toEqual({ ok: true, address: payer.address.toLowerCase() });
    expect(exactPermit2.signature!.recoverSigner(digest, '0x' + 'ab'.repeat(66))).toMatchObject({ ok: false });
  });

  it('stores the payload as JSON of strings and reads it back unchanged, with its terms', async () => {
    const { body } = await signed();
    const parsed = exactPermit2.parse(body, '/payload', network);
    const stored = JSON.parse(JSON.stringify(exactPermit2.toStored(parsed.payload)));
    expect(exactPermit2.fromStored(stored, network)).toEqual(parsed);
    expect(stored.permit2Authorization.nonce).toBe(NONCE);
  });

  it('fingerprints everything signed, apart from any EIP-3009 payment', async () => {
    const { body } = await signed();
    const p = exactPermit2.parse(body, '/payload', network).payload;
    const fingerprint = exactPermit2.fingerprint(p, network);
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    for (const changed of [{ amount: 1n }, { to: '0x' + '77'.repeat(20) }, { nonce: 1n }, { deadline: 1n }, { validAfter: 1n }, { token: '0x' + '55'.repeat(20) }]) {
      expect(exactPermit2.fingerprint({ ...p, ...changed }, network)).not.toBe(fingerprint);
    }
    expect(exactPermit2.fingerprint(p, { ...network, chainId: 8453 })).not.toBe(fingerprint);
  });

  it('names the path of a field that is not what it must be', async () => {
    const { body } = await signed();
    const cases: Array<[unknown, string]> = [
      [{ ...body, permit2Authorization: { ...body.permit2Authorization, from: '0x12' } }, '/payload/permit2Authorization/from'],
      [{ ...body, permit2Authorization: { ...body.permit2Authorization, nonce: '-1' } }, '/payload/permit2Authorization/nonce'],
      [{ ...body, permit2Authorization: { ...body.permit2Authorization, witness: { to: body.permit2Authorization.witness.to, validAfter: 5 } } }, '/payload/permit2Authorization/witness/validAfter'],
      [{ ...body, permit2Authorization: { ...body.permit2Authorization, permitted: null } }, '/payload/permit2Authorization/permitted'],
      [{ ...body, signature: 'zz' }, '/payload/signature'],
    ];
    for (const [bad, path] of cases) {
      let error: unknown;
      try {
        exactPermit2.parse(bad, '/payload', network);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).details).toMatchObject({ errors: [{ path }] });
    }
  });
});
