// The conformance suite: every registered mechanism, and a toy one registered only here, answer the
// checklist of `PaymentMechanism` (docs/architecture.md, "Adding a payment mechanism: the checklist"). The
// core, of every mechanism: claims exclusive across the registry, parse -> store -> read back is the
// identity, fingerprints stable. Each capability, of a mechanism that offers it: a direct call refuses an
// amount the payment forbids and paid-in reads a transfer log (EVM execution), digest and recovery
// round-trip (signature), the terms' nonce in its space (nonce), its spenders and permit (approval), its
// executor targets and gas; and an EVM mechanism offers the capabilities whose checks an EVM payment must
// pass (EVM execution, signature, nonce).
// Offline: the chain is a stub that builds calls and reads nothing.
import { bytesToHex, hexToBytes, InvalidRequestError } from '@facilitator/core';
import { paidBetween } from '@facilitator/evm-chain';
import { AbiCoder, concat, keccak256, recoverAddress, toUtf8Bytes, Wallet } from 'ethers';
import type { MechanismNetwork, ParsedPayment, PaymentMechanism, StoredPayload } from './mechanism';
import { mechanismFor, registeredMechanisms } from './registry';
import { settleAmountProblem, amountToSettle } from './settle-amount';
import { refusedPath } from './testing/permit2-signing';
import { OFFLINE_CHAIN, SPECIMEN_NETWORK, SPECIMENS, transferLog, withField, type MechanismSpecimen, type SignedSpecimen } from './testing/specimens';
import { CHAIN_FAMILIES, domainSeparator } from '@facilitator/core';
import { type PaymentMechanismId } from './mechanism-ids';

// ---- the toy: a mechanism written by the checklist, registered in this suite only ----

/** `toy` moves an exact amount by a payer's signature over (from, to, amount, nonce) under a per-chain domain. */
interface ToyPayload {
  from: string;
  to: string;
  amount: bigint;
  /** bytes32, lowercase */
  nonce: string;
  signature: string;
}
const TOY = 'toy/signed-transfer' as PaymentMechanismId;
const ADDRESS = /^0x[0-9a-f]{40}$/;

function toyField(value: unknown, path: string, pattern: RegExp): string {
  const text = typeof value === 'string' ? value.toLowerCase() : undefined;
  if (text === undefined || !pattern.test(text)) throw new InvalidRequestError('invalid payload', { errors: [{ path, message: `does not match ${pattern}` }] });
  return text;
}

function parseToy(payload: unknown, path: string): ToyPayload {
  const { toy, signature } = (payload ?? {}) as { toy?: Record<string, unknown>; signature?: unknown };
  return {
    from: toyField(toy?.from, `${path}/toy/from`, ADDRESS),
    to: toyField(toy?.to, `${path}/toy/to`, ADDRESS),
    amount: BigInt(toyField(toy?.amount, `${path}/toy/amount`, /^\d{1,78}$/)),
    nonce: toyField(toy?.nonce, `${path}/toy/nonce`, /^0x[0-9a-f]{64}$/),
    signature: toyField(signature, `${path}/signature`, /^0x[0-9a-f]{130}$/),
  };
}

function toyPayment(p: ToyPayload, network: MechanismNetwork): ParsedPayment<ToyPayload> {
  return {
    terms: { mechanism: TOY, scheme: 'toy', payer: p.from, payee: p.to, token: network.tokenAddress, amount: p.amount, validAfter: 0n, validBefore: 2n ** 64n, nonce: { space: network.tokenAddress, payer: p.from, value: p.nonce } },
    payload: p,
    signature: p.signature,
  };
}

const toyFields = (p: Pick<ToyPayload, 'from' | 'to' | 'amount' | 'nonce'>) => AbiCoder.defaultAbiCoder().encode(['address', 'address', 'uint256', 'bytes32'], [p.from, p.to, p.amount, p.nonce]);

const toy: PaymentMechanism<ToyPayload> = {
  id: TOY,
  family: 'evm',
  scheme: 'toy',
  claims: (payload) => typeof payload === 'object' && payload !== null && typeof (payload as { toy?: unknown }).toy === 'object',
  parse: (payload, path, network) => toyPayment(parseToy(payload, path), network),
  toStored: (p) => ({ toy: { from: p.from, to: p.to, amount: p.amount.toString(), nonce: p.nonce }, signature: p.signature }),
  fromStored: (stored, network) => toyPayment(parseToy(stored, ''), network),
  vocabulary: { payer: 'toy.from', payee: 'toy.to', amount: 'toy.amount', checker: 'the toy token' },
  fingerprint: (p, network) => keccak256(concat([toUtf8Bytes(`${TOY}:${network.chainId}:${network.tokenAddress}`), toyFields(p)])).slice(2),
  signedAmount: 'exact',
  x402Versions: [2],
  payloadSchema: { type: 'object', required: ['toy', 'signature'] },
  payloadMarker: { type: 'object', required: ['toy'] },
  describe: () => ({ scheme: 'toy' }),
  // its capabilities: how it executes on EVM (a call to the token), a signature recoverable offline under its
  // own per-chain domain, and the token's nonces (an EVM mechanism must offer all three); no approval, no
  // contract but the token, no gas beyond a transfer's
  evmExecution: {
    directCall(payment, chain, settle) {
      const amount = amountToSettle(toy, payment.terms, settle);
      return { to: chain.tokenAddress, data: '0x' + toyFields({ ...payment.payload, amount }).slice(2) + payment.signature.slice(2), gasKind: 'transferWithAuthorization' };
    },
    paidIn: (logs, { terms }, network) => paidBetween(logs, network.tokenAddress, terms.payer, terms.payee),
    findExecution: async () => undefined,
  },
  signature: {
    ownDomainSeparator: (network) => hexToBytes(keccak256(toUtf8Bytes(`toy:${network.chainId}:${network.tokenAddress}`))),
    signedDigest: (p, separator) => hexToBytes(keccak256(concat([separator, toyFields(p)]))),
    recoverSigner(digest, signature) {
      try {
        return { ok: true, address: recoverAddress(digest, signature).toLowerCase() };
      } catch (err) {
        return { ok: false, reason: (err as Error).message };
      }
    },
  },
  nonce: { space: (network) => network.tokenAddress, isUsed: (nonce, chain) => chain.isAuthorizationUsed(nonce.payer, nonce.value) },
  executor: { targets: (network) => ({ token: network.tokenAddress }) },
};
const toySignature = toy.signature!;

const TOY_SPECIMEN: MechanismSpecimen = {
  mechanism: toy as PaymentMechanism<unknown>,
  async sign(amount = 10_000n) {
    const payer = Wallet.createRandom();
    const fields = { from: payer.address.toLowerCase(), to: '0x' + 'ab'.repeat(20), amount, nonce: bytesToHex(hexToBytes(keccak256(toUtf8Bytes(payer.address)))) };
    const signature = payer.signingKey.sign(toySignature.signedDigest({ ...fields, signature: '' }, toySignature.ownDomainSeparator!(SPECIMEN_NETWORK))).serialized;
    return { payer: fields.from, payload: { toy: { ...fields, amount: amount.toString() }, signature } };
  },
  executionLogs: (payer, payee, amount) => [transferLog(SPECIMEN_NETWORK.tokenAddress, payer, payee, amount)],
  chain: OFFLINE_CHAIN,
  malformed: (payload) => withField(payload, ['toy', 'amount'], '-5'),
};

// ---- the suite ----

const registered = registeredMechanisms();
/** the registry as this suite sees it: every registered mechanism's specimen, and the toy */
const REGISTRY: MechanismSpecimen[] = [...registered.map((m) => SPECIMENS[m.id]), TOY_SPECIMEN];
const network = SPECIMEN_NETWORK;
const otherChain = { ...network, chainId: 8453 };

/** two payments of each mechanism, signed once for the whole suite (signing is most of its time) */
const signedPayments = new Map<MechanismSpecimen, Promise<SignedSpecimen[]>>();
const payments = (specimen: MechanismSpecimen) => {
  if (!signedPayments.has(specimen)) signedPayments.set(specimen, Promise.all([specimen.sign(), specimen.sign()]));
  return signedPayments.get(specimen)!;
};
const first = async (specimen: MechanismSpecimen) => (await payments(specimen))[0];

it('every registered mechanism has a specimen to run the checklist on', () => {
  expect(registered.map((m) => SPECIMENS[m.id]?.mechanism)).toEqual(registered);
  expect(new Set(REGISTRY.map((s) => s.mechanism.id)).size).toBe(REGISTRY.length);
});

describe.each(REGISTRY.map((s) => [s.mechanism.id, s] as const))('%s', (_id, specimen) => {
  const { mechanism } = specimen;
  const { evmExecution, signature, nonce, approval, executor, gas, x402 } = mechanism;
  const separatorOn = (on: MechanismNetwork) =>
    signature?.ownDomainSeparator?.(on) ?? (on.chainId === network.chainId ? specimen.tokenDomainSeparator! : domainSeparator({ name: 'USDC', version: '2', chainId: on.chainId, verifyingContract: on.tokenAddress }));

  it('claims its own payloads and no other mechanism of the registry does; the registry chooses it for its scheme', async () => {
    const { payload } = await first(specimen);
    expect(REGISTRY.filter((other) => other.mechanism.claims(payload)).map((s) => s.mechanism.id)).toEqual([mechanism.id]);
    for (const other of REGISTRY) expect({ other: other.mechanism.id, claims: mechanism.claims((await first(other)).payload) }).toEqual({ other: other.mechanism.id, claims: other === specimen });
    if (registered.includes(mechanism)) expect(mechanismFor(mechanism.scheme, registered.map((m) => m.id), payload)).toBe(mechanism);
    expect(mechanism.claims(null)).toBe(false);
  });

  it('reads a payload into terms of its own, and parse -> store -> read back is the identity', async () => {
    const { payer, payload } = await first(specimen);
    const parsed = mechanism.parse(payload, '/payload', network);
    expect(parsed.terms).toMatchObject({ mechanism: mechanism.id, scheme: mechanism.scheme, payer, amount: 10_000n, token: network.tokenAddress });
    expect(parsed.terms.nonce).toMatchObject({ payer });
    // through JSON, as the jsonb column keeps it
    const stored = JSON.parse(JSON.stringify(mechanism.toStored(parsed.payload))) as StoredPayload;
    const readBack = mechanism.fromStored(stored, network);
    expect(readBack).toEqual(parsed);
    expect(JSON.parse(JSON.stringify(mechanism.toStored(readBack.payload)))).toEqual(stored);
  });

  it('refuses a payload it claims with a field that is not what it must be, naming the field', async () => {
    const { payload, path } = specimen.malformed((await first(specimen)).payload);
    expect(mechanism.claims(payload)).toBe(true);
    expect(refusedPath(() => mechanism.parse(payload, '/payload', network))).toBe(path);
  });

  it('fingerprints a payment the same way however it was read, and apart from any other payment or chain', async () => {
    const { payload } = await first(specimen);
    const parsed = mechanism.parse(payload, '/payload', network);
    const fingerprint = mechanism.fingerprint(parsed.payload, network);
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(mechanism.fingerprint(mechanism.parse(payload, '/other', network).payload, network)).toBe(fingerprint);
    expect(mechanism.fingerprint(mechanism.fromStored(JSON.parse(JSON.stringify(mechanism.toStored(parsed.payload))), network).payload, network)).toBe(fingerprint);
    expect(mechanism.fingerprint(parsed.payload, otherChain)).not.toBe(fingerprint);
    const another = mechanism.parse((await payments(specimen))[1].payload, '/payload', network);
    expect(mechanism.fingerprint(another.payload, network)).not.toBe(fingerprint);
  });

  if (signature) {
    it('signature: gives the digest its payer signed, whose signer it recovers; under another chain\'s domain it is not the payer', async () => {
      const { payer, payload } = await first(specimen);
      const parsed = mechanism.parse(payload, '/payload', network);
      expect(signature.recoverSigner(signature.signedDigest(parsed.payload, separatorOn(network)), parsed.signature)).toEqual({ ok: true, address: payer });
      expect(signature.recoverSigner(signature.signedDigest(parsed.payload, separatorOn(otherChain)), parsed.signature)).not.toEqual({ ok: true, address: payer });
      expect(signature.recoverSigner(signature.signedDigest(parsed.payload, separatorOn(network)), '0x' + 'ab'.repeat(65))).not.toEqual({ ok: true, address: payer });
    });
  }

  if (nonce) {
    it('nonce: its terms name the nonce in its space, whoever read them', async () => {
      const { payer, payload } = await first(specimen);
      const parsed = mechanism.parse(payload, '/payload', network);
      expect(parsed.terms.nonce).toMatchObject({ space: nonce.space(network), payer });
      expect(nonce.space(network)).toMatch(ADDRESS);
    });
  }

  if (approval) {
    it('approval: names the contract the payer approves and the spender its payments must sign for; a permit, if it reads one, is the payer\'s', async () => {
      expect(approval.spender).toMatch(ADDRESS);
      expect(approval.signedSpender).toMatch(ADDRESS);
      const parsed = mechanism.parse((await first(specimen)).payload, '/payload', network);
      expect(parsed.terms.spender).toBe(approval.signedSpender);
      const permit = approval.permit?.(parsed.payload);
      if (permit) expect(permit).toMatchObject({ owner: parsed.terms.payer, spender: approval.spender });
    });
  }

  if (executor || gas) {
    it('executor and gas: names the executor\'s targets as addresses, and no negative extra gas', () => {
      for (const target of Object.values(executor?.targets(network) ?? {})) expect(target).toMatch(ADDRESS);
      for (const withPermit of [false, true]) expect(gas?.extra({ withPermit }) ?? 0n).toBeGreaterThanOrEqual(0n);
    });
  }

  if (x402?.extensions) {
    it('x402: names each extension it reads once, with a schema for its info', () => {
      const keys = x402.extensions!.map((e) => e.key);
      expect(new Set(keys).size).toBe(keys.length);
      for (const extension of x402.extensions!) expect(extension.infoSchema).toEqual(expect.any(Object));
    });
  }

  if (evmExecution) {
    it('EVM execution: builds its direct call for an amount the payment allows, and refuses one it forbids', async () => {
      const parsed = mechanism.parse((await first(specimen)).payload, '/payload', network);
      const signed = parsed.terms.amount;
      const call = evmExecution.directCall(parsed, specimen.chain, { amount: signed });
      expect(call.to).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect(call.data).toMatch(/^0x[0-9a-f]+$/i);
      const forbidden = mechanism.signedAmount === 'exact' ? [signed + 1n, signed - 1n, 0n] : [signed + 1n, 0n];
      for (const amount of forbidden) {
        expect(settleAmountProblem(mechanism, parsed.terms, amount)).toEqual(expect.any(String));
        expect(() => evmExecution.directCall(parsed, specimen.chain, { amount })).toThrow();
      }
    });

    it('EVM execution: reads what a transaction that ran its direct call paid the payee from its transfer log, and nothing from another transfer', async () => {
      const parsed = mechanism.parse((await first(specimen)).payload, '/payload', network);
      const { payer, payee, amount } = parsed.terms;
      expect(evmExecution.paidIn(specimen.executionLogs(payer, payee, amount), parsed, network)).toBe(amount);
      expect(evmExecution.paidIn(specimen.executionLogs(payer, '0x' + '77'.repeat(20), amount), parsed, network)).toBe(0n);
      expect(evmExecution.paidIn([], parsed, network)).toBe(0n);
    });
  }

  it('describes itself under its scheme, in the x402 versions that carry it, with its payload\'s own names', () => {
    expect(mechanism.describe(network, '0x' + '77'.repeat(20)).scheme).toBe(mechanism.scheme);
    expect(mechanism.x402Versions.length).toBeGreaterThan(0);
    for (const name of ['payer', 'payee', 'amount', 'checker'] as const) expect(mechanism.vocabulary[name]).toEqual(expect.any(String));
  });

  it('names a chain family the engine knows, whose networks are the ones it settles on', () => {
    expect(Object.keys(CHAIN_FAMILIES)).toContain(mechanism.family);
  });

  // verification and settlement run a capability's check only when a mechanism offers it: an EVM payment
  // executes by a call, and must pass the offline signature check and the nonce check, so an EVM mechanism
  // offers all three
  if (mechanism.family === 'evm') {
    it('as an EVM mechanism, executes by a call and offers an offline signature and a nonce space', () => {
      expect(evmExecution).toEqual(expect.objectContaining({ directCall: expect.any(Function), paidIn: expect.any(Function), findExecution: expect.any(Function) }));
      expect(signature).toEqual(expect.objectContaining({ signedDigest: expect.any(Function), recoverSigner: expect.any(Function) }));
      expect(nonce).toEqual(expect.objectContaining({ space: expect.any(Function), isUsed: expect.any(Function) }));
    });
  }
});
