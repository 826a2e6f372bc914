import { bytesToHex } from '@facilitator/core';
import { getAddress, TypedDataEncoder, Wallet } from 'ethers';
import { uptoPermit2WitnessTypes } from '@x402/evm';
import { uptoPermit2 } from '.';
import { exactPermit2 } from '../exact-permit2';
import { PERMIT2_ADDRESS, X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import { permit2DomainSeparator } from '../permit2/eip712';
import { ethersTypes, otherPermit2Forms, permit2Domain, refusedPath, signPermit2 } from '../testing/permit2-signing';
import { UPTO_PERMIT2 } from '../mechanism-ids';

const network = { chainId: 84532, tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' };
const domain = permit2Domain(network.chainId);
// a 256-bit nonce in decimal, as @x402/evm's client sends it (a random one there)
const NONCE = (2n ** 255n + 12_345n).toString();
const FACILITATOR = '0x' + 'FA'.repeat(20);

/** A payload as @x402/evm's upto client signs it: a maximum, for the upto proxy, naming the facilitator. */
async function signed() {
  const payer = Wallet.createRandom();
  const message = {
    permitted: { token: network.tokenAddress, amount: '10000' },
    spender: X402_UPTO_PERMIT2_PROXY,
    nonce: NONCE,
    deadline: '1900000000',
    witness: { to: '0x' + 'AB'.repeat(20), facilitator: FACILITATOR, validAfter: '1740672089' },
  };
  const signature = await signPermit2(payer, network.chainId, uptoPermit2WitnessTypes, message);
  const body = { permit2Authorization: { from: payer.address, ...message }, signature };
  return { payer, message, body };
}

describe('upto through Permit2', () => {
  it("reads the payload into terms: the signed maximum as the amount, the nonce in Permit2's space, the upto proxy as spender", async () => {
    const { payer, body } = await signed();
    const parsed = uptoPermit2.parse(body, '/payload', network);
    expect(parsed.terms).toEqual({
      mechanism: UPTO_PERMIT2,
      scheme: 'upto',
      payer: payer.address.toLowerCase(),
      payee: '0x' + 'ab'.repeat(20),
      token: network.tokenAddress,
      spender: X402_UPTO_PERMIT2_PROXY,
      amount: 10000n,
      validAfter: 1740672088n,
      validBefore: 1900000001n,
      nonce: { space: PERMIT2_ADDRESS, payer: payer.address.toLowerCase(), value: '0x' + BigInt(NONCE).toString(16).padStart(64, '0') },
      sender: FACILITATOR.toLowerCase(),
    });
    expect(parsed.payload.facilitator).toBe(FACILITATOR.toLowerCase());
    expect(uptoPermit2.signedAmount).toBe('maximum');
    expect(uptoPermit2.approval?.signedSpender).toBe(X402_UPTO_PERMIT2_PROXY);
    expect(uptoPermit2.nonce!.space(network)).toBe(PERMIT2_ADDRESS);
    // clients read the facilitator they must name from /x402/supported, checksummed as the reference gives it
    expect(uptoPermit2.describe(network, FACILITATOR.toLowerCase())).toEqual({ scheme: 'upto', extra: { facilitatorAddress: getAddress(FACILITATOR) } });
    expect(uptoPermit2.x402Versions).toEqual([2]);
    // the witness's facilitator is the payment's only sender
    expect(parsed.terms.sender).toBe(FACILITATOR.toLowerCase());
    expect(uptoPermit2.vocabulary).toEqual(exactPermit2.vocabulary);
  });

  it("hashes what @x402/evm's upto client signs, and recovers its signer as Permit2 does", async () => {
    const { payer, message, body } = await signed();
    const parsed = uptoPermit2.parse(body, '/payload', network);
    const separator = uptoPermit2.signature!.ownDomainSeparator!(network);
    expect(bytesToHex(separator)).toBe(TypedDataEncoder.hashDomain(domain));
    expect(separator).toEqual(permit2DomainSeparator(network.chainId));
    const digest = uptoPermit2.signature!.signedDigest(parsed.payload, separator);
    expect(bytesToHex(digest)).toBe(TypedDataEncoder.hash(domain, ethersTypes(uptoPermit2WitnessTypes), message));
    expect(uptoPermit2.signature!.recoverSigner(digest, parsed.signature)).toEqual({ ok: true, address: payer.address.toLowerCase() });

    // Permit2's forms: EIP-2098's 64 bytes and a high-s twin recover the same signer
    for (const form of Object.values(otherPermit2Forms(body.signature))) {
      expect(uptoPermit2.signature!.recoverSigner(digest, form)).toEqual({ ok: true, address: payer.address.toLowerCase() });
    }
    expect(uptoPermit2.signature!.recoverSigner(digest, '0x' + 'ab'.repeat(66))).toMatchObject({ ok: false });

    // the facilitator is signed: naming another sender is another digest, and so is exact's witness
    for (const other of [{ ...parsed.payload, facilitator: '0x' + '77'.repeat(20) }, { ...parsed.payload, to: '0x' + '77'.repeat(20) }]) {
      expect(uptoPermit2.signature!.recoverSigner(uptoPermit2.signature!.signedDigest(other, separator), parsed.signature)).not.toEqual({ ok: true, address: payer.address.toLowerCase() });
    }
    expect(bytesToHex(exactPermit2.signature!.signedDigest(parsed.payload, separator))).not.toBe(bytesToHex(digest));
  });

  it('stores the payload as JSON of strings, the facilitator in its witness, and reads it back unchanged', async () => {
    const { body } = await signed();
    const parsed = uptoPermit2.parse(body, '/payload', network);
    const stored = JSON.parse(JSON.stringify(uptoPermit2.toStored(parsed.payload)));
    expect(stored.permit2Authorization.witness).toEqual({ to: '0x' + 'ab'.repeat(20), facilitator: FACILITATOR.toLowerCase(), validAfter: '1740672089' });
    expect(stored.permit2Authorization.nonce).toBe(NONCE);
    expect(uptoPermit2.fromStored(stored, network)).toEqual(parsed);
    // a stored upto payload is upto's, never exact's
    expect(uptoPermit2.claims(stored)).toBe(true);
    expect(exactPermit2.claims(stored)).toBe(false);
  });

  it("fingerprints everything signed, the facilitator included, apart from exact's for the same fields", async () => {
    const { body } = await signed();
    const p = uptoPermit2.parse(body, '/payload', network).payload;
    const fingerprint = uptoPermit2.fingerprint(p, network);
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const changes = [{ amount: 1n }, { to: '0x' + '77'.repeat(20) }, { facilitator: '0x' + '77'.repeat(20) }, { nonce: 1n }, { deadline: 1n }, { validAfter: 1n }, { token: '0x' + '55'.repeat(20) }, { from: '0x' + '55'.repeat(20) }, { spender: '0x' + '55'.repeat(20) }];
    for (const changed of changes) expect(uptoPermit2.fingerprint({ ...p, ...changed }, network)).not.toBe(fingerprint);
    expect(uptoPermit2.fingerprint(p, { ...network, chainId: 8453 })).not.toBe(fingerprint);
    const { facilitator: _facilitator, ...sameFields } = p;
    expect(exactPermit2.fingerprint(sameFields, network)).not.toBe(fingerprint);
  });

  it('names the path of a field that is not what it must be, the facilitator included', async () => {
    const { body } = await signed();
    const auth = body.permit2Authorization;
    const cases: Array<[unknown, string]> = [
      [{ ...body, permit2Authorization: { ...auth, from: '0x12' } }, '/payload/permit2Authorization/from'],
      [{ ...body, permit2Authorization: { ...auth, permitted: { ...auth.permitted, amount: '1.5' } } }, '/payload/permit2Authorization/permitted/amount'],
      [{ ...body, permit2Authorization: { ...auth, nonce: '-1' } }, '/payload/permit2Authorization/nonce'],
      [{ ...body, permit2Authorization: { ...auth, witness: { ...auth.witness, facilitator: '0xnope' } } }, '/payload/permit2Authorization/witness/facilitator'],
      [{ ...body, permit2Authorization: { ...auth, witness: { ...auth.witness, facilitator: null } } }, '/payload/permit2Authorization/witness/facilitator'],
      [{ ...body, permit2Authorization: { ...auth, witness: { ...auth.witness, validAfter: 5 } } }, '/payload/permit2Authorization/witness/validAfter'],
      [{ ...body, permit2Authorization: { ...auth, witness: null } }, '/payload/permit2Authorization/witness'],
      [{ ...body, signature: 'zz' }, '/payload/signature'],
    ];
    for (const [bad, path] of cases) expect(refusedPath(() => uptoPermit2.parse(bad, '/payload', network))).toBe(path);
    expect(refusedPath(() => uptoPermit2.parse(body, '/payload', network))).toBeUndefined();
  });
});
