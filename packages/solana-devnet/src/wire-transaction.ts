import { getBase58Decoder } from '@solana/kit';

/**
 * A legacy or v0 transaction read from its wire bytes. The server needs what a validator reads before it runs
 * anything (signatures, fee payer, recent blockhash, compute budget, account keys) and what getTransaction
 * returns; kit's codecs give typed messages, but reading the bytes directly keeps every offset in one place.
 */
export interface WireTransaction {
  bytes: Uint8Array;
  /** base58, in the message's signer order; all zeros where a signer has not signed yet. */
  signatures: string[];
  messageBytes: Uint8Array;
  version: 'legacy' | 0;
  header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
  accountKeys: string[];
  recentBlockhash: string;
  instructions: { programIdIndex: number; accounts: number[]; data: Uint8Array }[];
  addressTableLookups: { accountKey: string; writableIndexes: number[]; readonlyIndexes: number[] }[];
}

const base58 = getBase58Decoder();

class Reader {
  offset = 0;
  constructor(private readonly bytes: Uint8Array) {}
  byte(): number {
    if (this.offset >= this.bytes.length) throw new Error('transaction too short');
    return this.bytes[this.offset++];
  }
  /** Solana's "compact-u16" (shortvec) length prefix. */
  shortVec(): number {
    let value = 0;
    for (let shift = 0; shift < 21; shift += 7) {
      const b = this.byte();
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return value;
    }
    throw new Error('bad compact-u16');
  }
  take(length: number): Uint8Array {
    if (this.offset + length > this.bytes.length) throw new Error('transaction too short');
    const slice = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return slice;
  }
}

export function parseWireTransaction(bytes: Uint8Array): WireTransaction {
  const reader = new Reader(bytes);
  const signatureCount = reader.shortVec();
  const signatures = Array.from({ length: signatureCount }, () => base58.decode(reader.take(64)));
  const messageBytes = bytes.subarray(reader.offset);
  const message = parseMessage(messageBytes);
  if (message.header.numRequiredSignatures !== signatureCount) throw new Error('signature count does not match the message header');
  return { bytes, signatures, messageBytes, ...message };
}

export function parseMessage(messageBytes: Uint8Array): Omit<WireTransaction, 'bytes' | 'signatures' | 'messageBytes'> {
  const reader = new Reader(messageBytes);
  let version: 'legacy' | 0 = 'legacy';
  if (messageBytes[0] & 0x80) {
    const number = reader.byte() & 0x7f;
    if (number !== 0) throw new Error(`unsupported transaction version ${number}`);
    version = 0;
  }
  const header = { numRequiredSignatures: reader.byte(), numReadonlySignedAccounts: reader.byte(), numReadonlyUnsignedAccounts: reader.byte() };
  const accountKeys = Array.from({ length: reader.shortVec() }, () => base58.decode(reader.take(32)));
  const recentBlockhash = base58.decode(reader.take(32));
  const instructions = Array.from({ length: reader.shortVec() }, () => {
    const programIdIndex = reader.byte();
    const accounts = [...reader.take(reader.shortVec())];
    const data = reader.take(reader.shortVec());
    return { programIdIndex, accounts, data };
  });
  const addressTableLookups =
    version === 0
      ? Array.from({ length: reader.shortVec() }, () => ({
          accountKey: base58.decode(reader.take(32)),
          writableIndexes: [...reader.take(reader.shortVec())],
          readonlyIndexes: [...reader.take(reader.shortVec())],
        }))
      : [];
  return { version, header, accountKeys, recentBlockhash, instructions, addressTableLookups };
}

/** Whether the static account at `index` may be written (the message header's rule). */
export function isWritable(tx: Pick<WireTransaction, 'header' | 'accountKeys'>, index: number): boolean {
  const { numRequiredSignatures, numReadonlySignedAccounts, numReadonlyUnsignedAccounts } = tx.header;
  if (index < numRequiredSignatures) return index < numRequiredSignatures - numReadonlySignedAccounts;
  return index < tx.accountKeys.length - numReadonlyUnsignedAccounts;
}

const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
const LAMPORTS_PER_SIGNATURE = 5000n;
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;
const MAX_COMPUTE_UNITS = 1_400_000n;

/**
 * The fee a validator charges: 5,000 lamports a signature plus the priority fee (compute unit price in
 * micro-lamports times the compute unit limit, rounded up), as getFeeForMessage and meta.fee report it.
 */
export function transactionFee(tx: Pick<WireTransaction, 'header' | 'accountKeys' | 'instructions'>): bigint {
  let unitLimit: bigint | undefined;
  let unitPrice = 0n;
  let otherInstructions = 0n;
  for (const instruction of tx.instructions) {
    if (tx.accountKeys[instruction.programIdIndex] !== COMPUTE_BUDGET_PROGRAM) {
      otherInstructions += 1n;
      continue;
    }
    const view = new DataView(instruction.data.buffer, instruction.data.byteOffset, instruction.data.byteLength);
    if (instruction.data[0] === 2 && instruction.data.length >= 5) unitLimit = BigInt(view.getUint32(1, true));
    if (instruction.data[0] === 3 && instruction.data.length >= 9) unitPrice = view.getBigUint64(1, true);
  }
  let units = unitLimit ?? otherInstructions * DEFAULT_UNITS_PER_INSTRUCTION;
  if (units > MAX_COMPUTE_UNITS) units = MAX_COMPUTE_UNITS;
  const priority = (unitPrice * units + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(tx.header.numRequiredSignatures) + priority;
}

const EMPTY_SIGNATURE = base58.decode(new Uint8Array(64));
export function isEmptySignature(signature: string): boolean {
  return signature === EMPTY_SIGNATURE;
}
