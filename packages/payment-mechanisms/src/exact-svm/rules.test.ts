import { findAssociatedTokenPda, getMintEncoder, getTransferCheckedInstruction } from '@solana-program/token';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  compressTransactionMessageUsingAddressLookupTables,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getU32Encoder,
  getU64Encoder,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type AccountSignerMeta,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { ExactSvmScheme as ExactSvmFacilitator } from '@x402/svm/exact/facilitator';
import path from 'node:path';
import { mintProblem } from './chain-facts';
import { decodeSvmTransaction } from './decode';
import { COMPUTE_BUDGET_PROGRAM, LIGHTHOUSE_PROGRAM, MEMO_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from './programs';
import { ExactSvmReason } from './reasons';
import { checkExactSvmPayment, checkExactSvmTransaction, type ExactSvmPolicy, type ExactSvmRequirements } from './rules';

// Transactions built by the stock @x402/svm client (over an in-memory JSON-RPC answering its two reads), and
// by a builder that writes the same bytes (checked below) with one thing changed per rule; every one of them
// also goes through the reference facilitator's verify, so our rules cannot drift from its.

const NETWORK = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const USDC = address('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
const TOKEN_2022_MINT = address('4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7');
const OTHER_MINT = address('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
const BLOCKHASH = 'EZ3rST5dvHmbanh75jc4PuLfV96vp9fEYBVeNk4FfM1k' as Blockhash;
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');

const keyOf = (seed: number) => createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(32).fill(seed));
let feePayer: KeyPairSigner;
let otherFeePayer: KeyPairSigner;
let payer: KeyPairSigner;
let stranger: KeyPairSigner;
let merchant: Address;
let ours: ExactSvmPolicy;

beforeAll(async () => {
  [feePayer, otherFeePayer, payer, stranger] = await Promise.all([keyOf(1), keyOf(2), keyOf(3), keyOf(4)]);
  merchant = (await keyOf(5)).address;
  ours = { feePayers: [feePayer.address, otherFeePayer.address] };
  // the reference logs every transaction it cannot decode
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterAll(() => jest.restoreAllMocks());

type TestRequirements = ExactSvmRequirements & { scheme: string; network: `${string}:${string}`; maxTimeoutSeconds: number; extra: Record<string, unknown> };
const requirementsFor = (overrides: Partial<ExactSvmRequirements> & { extra?: Record<string, unknown> } = {}): TestRequirements => ({
  scheme: 'exact',
  network: NETWORK as `${string}:${string}`,
  asset: USDC as string,
  amount: '10000',
  payTo: merchant as string,
  maxTimeoutSeconds: 60,
  ...overrides,
  extra: { feePayer: feePayer.address as string, ...overrides.extra },
});

// ---- the stock client, over an in-memory JSON-RPC (its only reads: the mint and a blockhash)

const mintData = (decimals: number) =>
  new Uint8Array(getMintEncoder().encode({ mintAuthority: merchant, supply: 10n ** 12n, decimals, isInitialized: true, freezeAuthority: null }));

async function stockPayment(requirements: TestRequirements, mint = { owner: TOKEN_PROGRAM as string, data: mintData(6) }): Promise<string> {
  const fetchBefore = globalThis.fetch;
  globalThis.fetch = (async (_url: string, init: { body: string }) => {
    const request = JSON.parse(init.body) as { id: number; method: string };
    const results: Record<string, unknown> = {
      getAccountInfo: {
        context: { slot: 1 },
        value: { data: [Buffer.from(mint.data).toString('base64'), 'base64'], executable: false, lamports: 1_461_600, owner: mint.owner, rentEpoch: 0, space: mint.data.length },
      },
      getLatestBlockhash: { context: { slot: 1 }, value: { blockhash: BLOCKHASH, lastValidBlockHeight: 150 } },
    };
    if (!(request.method in results)) throw new Error(`the fake RPC does not answer ${request.method}`);
    return new Response(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: results[request.method] }), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  try {
    const client = new ExactSvmClient(payer, { rpcUrl: 'http://fake-rpc.invalid' });
    const created = await client.createPaymentPayload(2, requirements);
    return (created.payload as { transaction: string }).transaction;
  } finally {
    globalThis.fetch = fetchBefore;
  }
}

// ---- the same transaction, built instruction by instruction as the stock client builds it

interface Build {
  version?: 'legacy' | 0 | 1;
  feePayer?: Address;
  limit?: number;
  price?: bigint;
  tokenProgram?: Address;
  mint?: Address;
  source?: Address;
  destination?: Address;
  /** the transfer's authority: a signer the builder signs for, or an address nobody signs for */
  authority?: KeyPairSigner | Address;
  amount?: bigint;
  memo?: string;
  /** what to do to the instruction list before it is compiled */
  edit?: (instructions: Instruction[], parts: { transfer: Instruction; memo: Instruction }) => Instruction[];
  sign?: boolean;
  lookupTables?: Record<Address, Address[]>;
}

const computeLimit = (units: number): Instruction => ({ programAddress: COMPUTE_BUDGET_PROGRAM, data: new Uint8Array([2, ...getU32Encoder().encode(units)]) });
const computePrice = (microLamports: bigint): Instruction => ({ programAddress: COMPUTE_BUDGET_PROGRAM, data: new Uint8Array([3, ...getU64Encoder().encode(microLamports)]) });
const memoOf = (text: string): Instruction => ({ programAddress: MEMO_PROGRAM, accounts: [], data: new TextEncoder().encode(text) });
const ata = async (owner: Address, mint: Address, tokenProgram: Address) => (await findAssociatedTokenPda({ owner, mint, tokenProgram }))[0];

async function transferOf(build: Build): Promise<Instruction> {
  const tokenProgram = build.tokenProgram ?? TOKEN_PROGRAM;
  const mint = build.mint ?? USDC;
  const authority = build.authority ?? payer;
  const authorityAddress = typeof authority === 'string' ? authority : authority.address;
  return getTransferCheckedInstruction(
    {
      source: build.source ?? (await ata(authorityAddress, mint, tokenProgram)),
      mint,
      destination: build.destination ?? (await ata(merchant, mint, tokenProgram)),
      authority: typeof authority === 'string' ? authority : authority,
      amount: build.amount ?? 10_000n,
      decimals: 6,
    },
    { programAddress: tokenProgram },
  ) as Instruction;
}

async function built(build: Build = {}): Promise<string> {
  const transfer = await transferOf(build);
  const memo = memoOf(build.memo ?? 'invoice-1');
  const standard = [computeLimit(build.limit ?? 20_000), computePrice(build.price ?? 1n), transfer, memo];
  const instructions = build.edit ? build.edit(standard, { transfer, memo }) : standard;
  const base = pipe(
    createTransactionMessage({ version: build.version ?? 0 }),
    (message) => setTransactionMessageFeePayer(build.feePayer ?? feePayer.address, message),
    (message) => appendTransactionMessageInstructions(instructions, message),
    (message) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 150n }, message),
  );
  const message = build.lookupTables && (build.version ?? 0) === 0 ? compressTransactionMessageUsingAddressLookupTables(base as never, build.lookupTables) : base;
  if (build.sign === false) return getBase64EncodedWireTransaction(compileTransaction(message));
  return getBase64EncodedWireTransaction(await partiallySignTransactionMessageWithSigners(message));
}

// ---- the reference's verify, with a signer whose simulation succeeds (what is left is the rules)

async function referenceVerify(transaction: string, requirements: TestRequirements, options: { maxComputeUnits?: number } = {}) {
  const signer = {
    getAddresses: () => ours.feePayers.map((a) => address(a)),
    signTransaction: () => Promise.reject(new Error('verify never signs')),
    simulateTransaction: () => Promise.resolve(),
    sendTransaction: () => Promise.reject(new Error('verify never sends')),
    confirmTransaction: () => Promise.reject(new Error('verify never confirms')),
  };
  // our rules always bound the signers to the client and the fee payer: the reference's option for it
  const facilitator = new ExactSvmFacilitator(signer as never, undefined, { maxRequiredSignatures: 2, ...options });
  const payload = { x402Version: 2, accepted: requirements, resource: { url: 'http://merchant.test/paid', description: '', mimeType: '' }, payload: { transaction } };
  return facilitator.verify(payload as never, requirements as never);
}

async function ourVerdict(transaction: string, requirements: TestRequirements, policy: Partial<ExactSvmPolicy> = {}) {
  return checkExactSvmTransaction(transaction, requirements, { ...ours, ...policy });
}

describe('the stock client and the builder', () => {
  it('the builder writes the stock client’s very bytes (its memo and blockhash given)', async () => {
    const requirements = requirementsFor({ extra: { memo: 'invoice-1' } });
    expect(await built()).toBe(await stockPayment(requirements));
  });

  it('a stock payment passes our rules and the reference’s, and names its terms', async () => {
    const requirements = requirementsFor();
    const transaction = await stockPayment(requirements);
    const verdict = await ourVerdict(transaction, requirements);
    expect(verdict).toEqual({
      ok: true,
      terms: {
        payer: payer.address,
        payee: merchant,
        source: await ata(payer.address, USDC, TOKEN_PROGRAM),
        destination: await ata(merchant, USDC, TOKEN_PROGRAM),
        mint: USDC,
        tokenProgram: TOKEN_PROGRAM,
        amount: 10_000n,
        decimals: 6,
        feePayer: feePayer.address,
        recentBlockhash: BLOCKHASH,
        memo: expect.stringMatching(/^[0-9a-f]{32}$/),
      },
    });
    expect(await referenceVerify(transaction, requirements)).toMatchObject({ isValid: true, payer: payer.address });
  });

  it('a stock Token-2022 payment passes both, to the Token-2022 associated token account', async () => {
    const requirements = requirementsFor({ asset: TOKEN_2022_MINT });
    const transaction = await stockPayment(requirements, { owner: TOKEN_2022_PROGRAM, data: mintData(6) });
    const verdict = await ourVerdict(transaction, requirements);
    expect(verdict).toMatchObject({ ok: true, terms: { tokenProgram: TOKEN_2022_PROGRAM, destination: await ata(merchant, TOKEN_2022_MINT, TOKEN_2022_PROGRAM) } });
    expect(await referenceVerify(transaction, requirements)).toMatchObject({ isValid: true });
  });
});

describe('decodeSvmTransaction', () => {
  it('reads the stock client’s transaction: accounts, header, instructions, signatures, blockhash', async () => {
    const decoded = decodeSvmTransaction(await stockPayment(requirementsFor({ extra: { memo: 'invoice-1' } })));
    if (!decoded.ok) throw new Error(decoded.message);
    const { transaction } = decoded;
    expect(transaction.version).toBe(0);
    expect(transaction.feePayer).toBe(feePayer.address);
    expect(transaction.header).toEqual({ numSignerAccounts: 2, numReadonlySignerAccounts: 1, numReadonlyNonSignerAccounts: 4 });
    expect(transaction.signatures.map(({ signer, signature }) => [signer, signature === null])).toEqual([
      [feePayer.address, true],
      [payer.address, false],
    ]);
    expect(transaction.recentBlockhash).toBe(BLOCKHASH);
    expect(transaction.instructions.map(({ programAddress }) => programAddress)).toEqual([COMPUTE_BUDGET_PROGRAM, COMPUTE_BUDGET_PROGRAM, TOKEN_PROGRAM, MEMO_PROGRAM]);
    expect(transaction.instructions[2].accounts.map(({ address: a }) => a)).toEqual([
      await ata(payer.address, USDC, TOKEN_PROGRAM),
      USDC,
      await ata(merchant, USDC, TOKEN_PROGRAM),
      payer.address,
    ]);
    expect(new TextDecoder().decode(new Uint8Array(transaction.instructions[3].data))).toBe('invoice-1');
  });

  it('reads a legacy transaction', async () => {
    const decoded = decodeSvmTransaction(await built({ version: 'legacy' }));
    expect(decoded).toMatchObject({ ok: true, transaction: { version: 'legacy', feePayer: feePayer.address } });
  });

  it('refuses what is not a transaction, and a transaction with address lookup tables', async () => {
    expect(decodeSvmTransaction('not base64 at all!')).toMatchObject({ ok: false, reason: ExactSvmReason.TransactionCouldNotBeDecoded });
    expect(decodeSvmTransaction(Buffer.from('short').toString('base64'))).toMatchObject({ ok: false, reason: ExactSvmReason.TransactionCouldNotBeDecoded });
    const withTable = await built({ lookupTables: { [stranger.address]: [USDC] } });
    expect(decodeSvmTransaction(withTable)).toEqual({ ok: false, reason: ExactSvmReason.AltResolutionUnavailable, message: 'address lookup tables are not accepted' });
  });

  it('refuses a version 1 message (its compute budget lives outside the instructions)', async () => {
    const transaction = await built({ version: 1 });
    expect(decodeSvmTransaction(transaction)).toMatchObject({ ok: false, reason: ExactSvmReason.TransactionCouldNotBeDecoded, message: expect.stringContaining('version 1') });
    // the reference refuses it too, by accident: it looks for the transfer in `compiled.instructions`, which a v1 message lacks
    expect(await referenceVerify(transaction, requirementsFor())).toMatchObject({ isValid: false, invalidReason: ExactSvmReason.NoTransferInstruction });
  });
});

// One case per rule: our reason, and whether the rule is the reference's (then its invalidReason is ours) or
// ours alone (then the reference, whose static path does not check it, accepts the transaction).
interface Case {
  name: string;
  transaction: () => Promise<string>;
  requirements?: () => TestRequirements;
  policy?: Partial<ExactSvmPolicy>;
  referenceOptions?: { maxComputeUnits?: number };
  reason: string | undefined;
  rule: 'reference' | 'ours';
}

const systemTransfer = (from: Address, to: Address): Instruction => ({
  programAddress: SYSTEM_PROGRAM,
  accounts: [
    { address: from, role: AccountRole.WRITABLE_SIGNER },
    { address: to, role: AccountRole.WRITABLE },
  ],
  data: new Uint8Array([2, 0, 0, 0, ...getU64Encoder().encode(1_000n)]),
});
const signerMeta = (signer: KeyPairSigner): AccountSignerMeta => ({ address: signer.address, role: AccountRole.READONLY_SIGNER, signer });
const lighthouse = (accounts: Instruction['accounts'] = []): Instruction => ({ programAddress: LIGHTHOUSE_PROGRAM, accounts, data: new Uint8Array([4, 1]) });

const CASES: Case[] = [
  { name: 'a payment as the stock client makes it', transaction: () => built(), reason: undefined, rule: 'reference' },
  { name: 'a legacy transaction', transaction: () => built({ version: 'legacy' }), reason: undefined, rule: 'reference' },
  { name: 'Lighthouse assertions after the memo', transaction: () => built({ edit: (ixs) => [...ixs, lighthouse(), lighthouse()] }), reason: undefined, rule: 'reference' },
  { name: 'the seller’s memo, as asked', transaction: () => built(), requirements: () => requirementsFor({ extra: { memo: 'invoice-1' } }), reason: undefined, rule: 'reference' },
  {
    name: 'requirements without a fee payer',
    transaction: () => built(),
    requirements: () => ({ ...requirementsFor(), extra: {} }),
    reason: ExactSvmReason.MissingFeePayer,
    rule: 'reference',
  },
  {
    name: 'a fee payer that is not ours',
    transaction: () => built({ feePayer: stranger.address }),
    requirements: () => requirementsFor({ extra: { feePayer: stranger.address } }),
    reason: ExactSvmReason.FeePayerNotManaged,
    rule: 'reference',
  },
  { name: 'a transaction paid by another of our fee payers than the requirements’', transaction: () => built({ feePayer: otherFeePayer.address }), reason: ExactSvmReason.FeePayerMismatch, rule: 'reference' },
  { name: 'a transaction the client has not signed', transaction: () => built({ sign: false }), reason: ExactSvmReason.SignatureInvalid, rule: 'reference' },
  {
    name: 'an extra signer required (a signer account on the memo)',
    transaction: () => built({ edit: (ixs, { memo }) => [...ixs.slice(0, 3), { ...memo, accounts: [signerMeta(stranger)] } as Instruction] }),
    reason: ExactSvmReason.ExcessiveSigners,
    rule: 'reference',
  },
  { name: 'two instructions', transaction: () => built({ edit: (ixs) => ixs.slice(1, 3) }), reason: ExactSvmReason.InstructionsLength, rule: 'reference' },
  { name: 'eight instructions', transaction: () => built({ edit: (ixs) => [...ixs, ...[1, 2, 3, 4].map(() => lighthouse())] }), reason: ExactSvmReason.InstructionsLength, rule: 'reference' },
  { name: 'no compute unit limit first', transaction: () => built({ edit: (ixs) => [ixs[1], ixs[1], ...ixs.slice(2)] }), reason: ExactSvmReason.ComputeLimitInstruction, rule: 'reference' },
  {
    name: 'a compute unit limit above the operator’s bound',
    transaction: () => built({ limit: 1_400_000 }),
    policy: { maxComputeUnits: 200_000 },
    referenceOptions: { maxComputeUnits: 200_000 },
    reason: ExactSvmReason.ComputeLimitInstructionTooHigh,
    rule: 'reference',
  },
  { name: 'no compute unit price second', transaction: () => built({ edit: (ixs) => [ixs[0], ixs[0], ...ixs.slice(2)] }), reason: ExactSvmReason.ComputePriceInstruction, rule: 'reference' },
  { name: 'a compute unit price above the bound', transaction: () => built({ price: 5_000_001n }), reason: ExactSvmReason.ComputePriceInstructionTooHigh, rule: 'reference' },
  { name: 'a compute unit price at the bound', transaction: () => built({ price: 5_000_000n }), reason: undefined, rule: 'reference' },
  {
    name: 'a plain Transfer rather than TransferChecked',
    transaction: () => built({ edit: (ixs, { transfer }) => [ixs[0], ixs[1], { ...transfer, data: new Uint8Array([3, ...getU64Encoder().encode(10_000n), 0]) }, ixs[3]] }),
    reason: ExactSvmReason.NoTransferInstruction,
    rule: 'reference',
  },
  { name: 'no token instruction at all', transaction: () => built({ edit: (ixs) => [ixs[0], ixs[1], ixs[3]] }), reason: ExactSvmReason.NoTransferInstruction, rule: 'reference' },
  { name: 'the fee payer as the transfer’s authority', transaction: () => built({ authority: feePayer.address }), reason: ExactSvmReason.FeePayerTransferringFunds, rule: 'reference' },
  { name: 'another of our fee payers as the transfer’s authority', transaction: () => built({ authority: otherFeePayer }), reason: ExactSvmReason.FeePayerTransferringFunds, rule: 'reference' },
  { name: 'the wrong mint', transaction: () => built({ mint: OTHER_MINT }), reason: ExactSvmReason.MintMismatch, rule: 'reference' },
  { name: 'the wrong destination token account', transaction: () => built({ destination: stranger.address }), reason: ExactSvmReason.RecipientMismatch, rule: 'reference' },
  {
    name: 'the payTo’s token account under the other token program',
    transaction: async () => built({ destination: await ata(merchant, USDC, TOKEN_2022_PROGRAM) }),
    reason: ExactSvmReason.RecipientMismatch,
    rule: 'reference',
  },
  { name: 'an underpayment', transaction: () => built({ amount: 9_999n }), reason: ExactSvmReason.AmountMismatch, rule: 'reference' },
  { name: 'an overpayment', transaction: () => built({ amount: 10_001n }), reason: ExactSvmReason.AmountMismatch, rule: 'reference' },
  { name: 'an unknown fourth instruction', transaction: () => built({ edit: (ixs) => [...ixs.slice(0, 3), systemTransfer(payer.address, merchant)] }), reason: ExactSvmReason.UnknownFourthInstruction, rule: 'reference' },
  { name: 'an unknown fifth instruction', transaction: () => built({ edit: (ixs) => [...ixs, systemTransfer(payer.address, merchant)] }), reason: ExactSvmReason.UnknownFifthInstruction, rule: 'reference' },
  { name: 'two transfers', transaction: () => built({ edit: (ixs, { transfer }) => [...ixs.slice(0, 3), transfer, ixs[3]] }), reason: ExactSvmReason.UnknownFourthInstruction, rule: 'reference' },
  {
    name: 'a memo other than the seller’s',
    transaction: () => built({ memo: 'invoice-2' }),
    requirements: () => requirementsFor({ extra: { memo: 'invoice-1' } }),
    reason: ExactSvmReason.MemoMismatch,
    rule: 'reference',
  },
  {
    name: 'two memos where the seller asked for one',
    transaction: () => built({ edit: (ixs, { memo }) => [...ixs, memo] }),
    requirements: () => requirementsFor({ extra: { memo: 'invoice-1' } }),
    reason: ExactSvmReason.MemoCount,
    rule: 'reference',
  },
  {
    name: 'no memo where the seller asked for one',
    transaction: () => built({ edit: (ixs) => ixs.slice(0, 3) }),
    requirements: () => requirementsFor({ extra: { memo: 'invoice-1' } }),
    reason: ExactSvmReason.MemoCount,
    rule: 'reference',
  },
  { name: 'an address lookup table', transaction: () => built({ lookupTables: { [stranger.address]: [USDC] } }), reason: ExactSvmReason.AltResolutionUnavailable, rule: 'reference' },
  { name: 'bytes that are no transaction', transaction: async () => Buffer.from('no transaction').toString('base64'), reason: ExactSvmReason.TransactionCouldNotBeDecoded, rule: 'reference' },
  // ours: the scheme's sponsor rules the reference's static path leaves unchecked
  {
    name: 'the fee payer among the memo’s accounts',
    transaction: () => built({ edit: (ixs, { memo }) => [...ixs.slice(0, 3), { ...memo, accounts: [{ address: feePayer.address, role: AccountRole.READONLY }] }] }),
    reason: ExactSvmReason.FeePayerNotIsolated,
    rule: 'ours',
  },
  {
    name: 'the fee payer among a Lighthouse instruction’s accounts',
    transaction: () => built({ edit: (ixs) => [...ixs, lighthouse([{ address: feePayer.address, role: AccountRole.WRITABLE }])] }),
    reason: ExactSvmReason.FeePayerNotIsolated,
    rule: 'ours',
  },
  { name: 'the fee payer as the transfer’s source', transaction: () => built({ source: feePayer.address }), reason: ExactSvmReason.FeePayerNotIsolated, rule: 'ours' },
  {
    name: 'the fee payer as a multisig signer of the transfer',
    transaction: () => built({ edit: (ixs, { transfer }) => [ixs[0], ixs[1], { ...transfer, accounts: [...(transfer.accounts ?? []), { address: feePayer.address, role: AccountRole.READONLY_SIGNER }] }, ixs[3]] }),
    reason: ExactSvmReason.FeePayerNotIsolated,
    rule: 'ours',
  },
  {
    name: 'a signer who is not the transfer’s authority (a multisig authority)',
    transaction: () =>
      built({
        authority: merchant,
        edit: (ixs, { transfer }) => [ixs[0], ixs[1], { ...transfer, accounts: [...(transfer.accounts ?? []).map((meta, i) => (i === 3 ? { address: meta.address, role: AccountRole.READONLY } : meta)), signerMeta(stranger)] } as Instruction, ixs[3]],
      }),
    reason: ExactSvmReason.ExcessiveSigners,
    rule: 'ours',
  },
  {
    name: 'a transfer whose authority does not sign',
    transaction: () => built({ authority: merchant, edit: (ixs, { transfer }) => [ixs[0], ixs[1], { ...transfer, accounts: (transfer.accounts ?? []).map((meta, i) => (i === 3 ? { address: meta.address, role: AccountRole.READONLY } : meta)) }, ixs[3]] }),
    reason: ExactSvmReason.SignatureInvalid,
    rule: 'ours',
  },
];

describe('checkExactSvmTransaction, rule by rule, against the reference facilitator’s verify', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const requirements = (c.requirements ?? (() => requirementsFor()))();
    const transaction = await c.transaction();
    const verdict = await ourVerdict(transaction, requirements, c.policy);
    expect(verdict.ok ? undefined : verdict.reason).toBe(c.reason);
    const reference = await referenceVerify(transaction, requirements, c.referenceOptions);
    if (c.rule === 'reference') {
      // the reference appends a sentence to some codes ("code: why"); the code is what must agree
      expect(reference.invalidReason?.split(':')[0]).toBe(c.reason);
    } else {
      expect(reference).toMatchObject({ isValid: true });
    }
  });
});

describe('checkExactSvmPayment', () => {
  it('rules on a decoded transaction alone, and re-checks the requirements’ fee payer', async () => {
    const decoded = decodeSvmTransaction(await built());
    if (!decoded.ok) throw new Error(decoded.message);
    expect(await checkExactSvmPayment(decoded.transaction, requirementsFor(), ours)).toMatchObject({ ok: true, terms: { payer: payer.address } });
    expect(await checkExactSvmPayment(decoded.transaction, requirementsFor(), { feePayers: [otherFeePayer.address] })).toMatchObject({
      ok: false,
      reason: ExactSvmReason.FeePayerNotManaged,
    });
  });

  it('refuses an amount in the requirements that is no integer as a mismatch (the reference throws)', async () => {
    expect(await ourVerdict(await built(), requirementsFor({ amount: '1e4' }))).toMatchObject({ ok: false, reason: ExactSvmReason.AmountMismatch });
  });
});

describe('the gaps the reference leaves, beside the rules', () => {
  // the stock client decodes mints with its own @solana-program/token-2022 (no version of it takes kit 8)
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const token2022 = require(require.resolve('@solana-program/token-2022', { paths: [path.dirname(require.resolve('@x402/svm'))] })) as {
    getMintEncoder: () => { encode: (mint: unknown) => Uint8Array };
  };

  it('a Token-2022 mint with a transfer fee: the stock client pays, the reference and our rules accept, mintProblem refuses', async () => {
    const fee = { epoch: 0n, maximumFee: 1_000n, transferFeeBasisPoints: 100 };
    const data = new Uint8Array(
      token2022.getMintEncoder().encode({
        mintAuthority: merchant,
        supply: 10n ** 12n,
        decimals: 6,
        isInitialized: true,
        freezeAuthority: null,
        extensions: [{ __kind: 'TransferFeeConfig', transferFeeConfigAuthority: merchant, withdrawWithheldAuthority: merchant, withheldAmount: 0n, olderTransferFee: fee, newerTransferFee: fee }],
      }),
    );
    const requirements = requirementsFor({ asset: TOKEN_2022_MINT });
    const transaction = await stockPayment(requirements, { owner: TOKEN_2022_PROGRAM, data });
    expect(await referenceVerify(transaction, requirements)).toMatchObject({ isValid: true });
    expect(await ourVerdict(transaction, requirements)).toMatchObject({ ok: true });
    expect(mintProblem({ owner: TOKEN_2022_PROGRAM, data })).toMatchObject({ ok: false, reason: ExactSvmReason.InvalidPaymentRequirements, problem: 'mint_transfer_fee' });
  });
});
