import { getBase58Decoder, getBase58Encoder } from '@solana/kit';
import { INVALID_PARAMS, RpcError, type RpcHandler } from './json-rpc-server';
import type { ChainAccount, LandedTransaction } from './chain-records';
import type { RpcChain } from './rpc-chain';
import type { Commitment } from './slot-clock';
import { parsedTokenData, readMint, readTokenAccount, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, uiTokenAmount } from './token-accounts';
import { isWritable, parseMessage, transactionFee, type WireTransaction } from './wire-transaction';

/** Devnet's genesis hash: its first 32 characters are the CAIP-2 reference (`solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1`). */
export const DEVNET_GENESIS_HASH = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';
const U64_MAX = 18_446_744_073_709_551_615n;
const base58 = { encode: getBase58Decoder(), decode: getBase58Encoder() };

type Config = Record<string, unknown>;

/**
 * The Solana JSON-RPC methods the chain answers, in the node's shapes: what `@solana/kit`'s rpc, the stock
 * `@x402/svm` client and facilitator (its `toFacilitatorSvmSigner`) and a wallet's first reads call, plus three
 * `devnet_*` controls for tests in another process (like anvil's `anvil_*`).
 */
export function rpcMethods(chain: RpcChain): Map<string, RpcHandler> {
  const context = (commitment: Commitment = 'finalized') => ({ apiVersion: '2.2.0', slot: chain.slot(commitment) });
  const withContext = (config: Config, value: unknown) => ({ context: context(commitmentOf(config)), value });
  const decimalsOf = (mint: string) => chain.mintDecimals(mint);

  const methods: Record<string, RpcHandler> = {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': '2.2.0', 'feature-set': 3294202862 }),
    getGenesisHash: () => DEVNET_GENESIS_HASH,
    getIdentity: () => ({ identity: 'LiteSVM111111111111111111111111111111111111' }),
    getSlot: ([config]) => chain.slot(commitmentOf(config)),
    getBlockHeight: ([config]) => chain.blockHeight(commitmentOf(config)),
    getEpochInfo: ([config]) => chain.epochInfo(commitmentOf(config)),
    getTransactionCount: ([config]) => chain.epochInfo(commitmentOf(config)).transactionCount,
    getRecentPrioritizationFees: () => [],
    getLatestBlockhash: ([config]) => withContext(asConfig(config), chain.latestBlockhash(commitmentOf(config))),
    isBlockhashValid: ([blockhash, config]) => withContext(asConfig(config), chain.isBlockhashValid(text(blockhash, 'blockhash'))),
    getMinimumBalanceForRentExemption: ([length]) => chain.minimumBalanceForRentExemption(Number(length ?? 0)),
    getBalance: ([address, config]) => withContext(asConfig(config), chain.getAccount(text(address, 'address'))?.lamports ?? 0n),
    getAccountInfo: ([address, config]) => {
      const account = chain.getAccount(text(address, 'address'));
      return withContext(asConfig(config), account && encodeAccount(account, asConfig(config), decimalsOf));
    },
    getMultipleAccounts: ([addresses, config]) => {
      if (!Array.isArray(addresses)) throw new RpcError(INVALID_PARAMS, 'Invalid params: expected an array of addresses');
      return withContext(
        asConfig(config),
        addresses.map((address) => {
          const account = chain.getAccount(text(address, 'address'));
          return account && encodeAccount(account, asConfig(config), decimalsOf);
        }),
      );
    },
    getProgramAccounts: ([program, config]) => {
      const options = asConfig(config);
      const list = chain
        .programAccounts(text(program, 'program id'))
        .filter((account) => matchesFilters(account.data, options.filters))
        .map((account) => ({ pubkey: account.address, account: encodeAccount(account, options, decimalsOf) }));
      return options.withContext ? withContext(options, list) : list;
    },
    getTokenAccountsByOwner: ([owner, filter, config]) => {
      const { mint, programId } = asConfig(filter) as { mint?: string; programId?: string };
      const programs = programId ? [programId] : [TOKEN_PROGRAM, TOKEN_2022_PROGRAM];
      const list = programs.flatMap((program) =>
        chain
          .programAccounts(program)
          .filter((account) => {
            const token = readTokenAccount(account.owner, account.data);
            return token && token.owner === owner && (!mint || token.mint === mint);
          })
          .map((account) => ({ pubkey: account.address, account: encodeAccount(account, asConfig(config), decimalsOf) })),
      );
      return withContext(asConfig(config), list);
    },
    getTokenAccountBalance: ([address, config]) => {
      const account = chain.getAccount(text(address, 'address'));
      const token = account && readTokenAccount(account.owner, account.data);
      if (!token) throw new RpcError(INVALID_PARAMS, 'Invalid param: not a Token account');
      return withContext(asConfig(config), uiTokenAmount(token.amount, decimalsOf(token.mint) ?? 0));
    },
    getTokenSupply: ([address, config]) => {
      const account = chain.getAccount(text(address, 'address'));
      const mint = account && readMint(account.owner, account.data);
      if (!mint) throw new RpcError(INVALID_PARAMS, 'Invalid param: not a Token mint');
      return withContext(asConfig(config), uiTokenAmount(mint.supply, mint.decimals));
    },
    getFeeForMessage: ([message, config]) => {
      let parsed;
      try {
        parsed = parseMessage(Buffer.from(text(message, 'message'), 'base64'));
      } catch {
        throw new RpcError(INVALID_PARAMS, 'invalid message');
      }
      return withContext(asConfig(config), chain.isBlockhashValid(parsed.recentBlockhash) ? transactionFee(parsed) : null);
    },
    requestAirdrop: ([address, lamports]) => chain.airdrop(text(address, 'address'), BigInt(lamports as number)),
    simulateTransaction: ([transaction, config]) => {
      const options = asConfig(config);
      if (options.sigVerify && options.replaceRecentBlockhash) throw new RpcError(INVALID_PARAMS, 'sigVerify may not be used with replaceRecentBlockhash');
      const result = chain.simulate(wireBytes(transaction, options.encoding), { sigVerify: Boolean(options.sigVerify), replaceRecentBlockhash: Boolean(options.replaceRecentBlockhash) });
      const wanted = asConfig(options.accounts);
      const accounts = Array.isArray(wanted.addresses)
        ? wanted.addresses.map((address: unknown) => {
            const after = result.postAccounts.get(text(address, 'address')) ?? chain.getAccount(text(address, 'address'));
            return after && encodeAccount({ ...after, space: BigInt(after.data.length) }, wanted, decimalsOf);
          })
        : null;
      return withContext(options, {
        err: result.err,
        logs: result.logs,
        accounts,
        unitsConsumed: result.unitsConsumed,
        returnData: result.returnData,
        innerInstructions: options.innerInstructions ? result.innerInstructions.map(encodeInnerInstructions) : null,
        replacementBlockhash: result.replacementBlockhash ?? null,
        fee: result.fee,
      });
    },
    sendTransaction: ([transaction, config]) => {
      const options = asConfig(config);
      return chain.send(wireBytes(transaction, options.encoding), { skipPreflight: Boolean(options.skipPreflight) });
    },
    getSignatureStatuses: ([signatures]) => {
      if (!Array.isArray(signatures) || signatures.length > 256) throw new RpcError(INVALID_PARAMS, 'Invalid params: expected at most 256 signatures');
      return { context: context('processed'), value: signatures.map((signature) => chain.signatureStatus(text(signature, 'signature'))) };
    },
    getTransaction: ([signature, config]) => {
      const options = asConfig(config);
      const commitment = commitmentOf(options);
      if (commitment === 'processed') throw new RpcError(INVALID_PARAMS, 'Method does not support commitment below `confirmed`');
      const record = chain.landedTransaction(text(signature, 'signature'), commitment);
      if (!record || !record.tx) return null;
      const maxVersion = options.maxSupportedTransactionVersion;
      if (record.tx.version === 0 && (maxVersion === undefined || maxVersion === null)) {
        throw new RpcError(
          -32015,
          'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
        );
      }
      return encodeLandedTransaction(record, record.tx, String(options.encoding ?? 'json'), maxVersion !== undefined && maxVersion !== null);
    },

    // ---- test controls ----
    devnet_advanceSlots: ([count]) => {
      chain.advanceSlots(Number(count ?? 1));
      return chain.slot('processed');
    },
    devnet_dropNextSend: ([count]) => {
      chain.dropNextSend(Number(count ?? 1));
      return null;
    },
    devnet_setAccount: ([account]) => {
      const { address, lamports, data, owner, executable } = asConfig(account) as { address: string; lamports: number | string; data: string | [string, string]; owner: string; executable?: boolean };
      const encoded = Array.isArray(data) ? data[0] : (data ?? '');
      chain.setAccount({ address, lamports: BigInt(lamports), data: Buffer.from(encoded, 'base64'), owner, executable });
      return null;
    },
  };
  return new Map(Object.entries(methods));
}

function asConfig(value: unknown): Config {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Config) : {};
}

function commitmentOf(config: unknown): Commitment {
  const commitment = asConfig(config).commitment;
  return commitment === 'processed' || commitment === 'confirmed' ? commitment : 'finalized';
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new RpcError(INVALID_PARAMS, `Invalid param: ${what} must be a string`);
  return value;
}

/** A wire transaction in the request's encoding (the RPC's default is base58). */
function wireBytes(transaction: unknown, encoding: unknown): Uint8Array {
  const encoded = text(transaction, 'transaction');
  if (encoding === 'base64') return Buffer.from(encoded, 'base64');
  if (encoding === undefined || encoding === 'base58') return new Uint8Array(base58.decode.encode(encoded));
  throw new RpcError(INVALID_PARAMS, `unsupported encoding: ${String(encoding)}. Supported encodings: base58, base64`);
}

function encodeAccount(account: ChainAccount, config: Config, decimalsOf: (mint: string) => number | undefined) {
  const encoding = config.encoding ?? 'base58';
  let data: unknown;
  const slice = asConfig(config.dataSlice) as { offset?: number; length?: number };
  const bytes = slice.length !== undefined ? account.data.subarray(slice.offset ?? 0, (slice.offset ?? 0) + slice.length) : account.data;
  if (encoding === 'jsonParsed') data = parsedTokenData(account.owner, account.data, decimalsOf) ?? [Buffer.from(account.data).toString('base64'), 'base64'];
  else if (encoding === 'base64') data = [Buffer.from(bytes).toString('base64'), 'base64'];
  else if (encoding === 'base58') data = [base58.encode.decode(bytes), 'base58'];
  else throw new RpcError(INVALID_PARAMS, `unsupported encoding: ${String(encoding)}`);
  return { data, executable: account.executable, lamports: account.lamports, owner: account.owner, rentEpoch: U64_MAX, space: account.space };
}

function matchesFilters(data: Uint8Array, filters: unknown): boolean {
  if (!Array.isArray(filters)) return true;
  return filters.every((filter: { dataSize?: number; memcmp?: { offset: number; bytes: string; encoding?: string } }) => {
    if (filter.dataSize !== undefined) return data.length === filter.dataSize;
    if (filter.memcmp) {
      const wanted = filter.memcmp.encoding === 'base64' ? Buffer.from(filter.memcmp.bytes, 'base64') : base58.decode.encode(filter.memcmp.bytes);
      const actual = data.subarray(filter.memcmp.offset, filter.memcmp.offset + wanted.length);
      return actual.length === wanted.length && actual.every((byte, i) => byte === wanted[i]);
    }
    return true;
  });
}

function encodeInnerInstructions(entry: LandedTransaction['innerInstructions'][number]) {
  return {
    index: entry.index,
    instructions: entry.instructions.map((ix) => ({ programIdIndex: ix.programIdIndex, accounts: ix.accounts, data: base58.encode.decode(ix.data), stackHeight: ix.stackHeight })),
  };
}

function encodeLandedTransaction(record: LandedTransaction, tx: WireTransaction, encoding: string, withVersion: boolean) {
  let transaction: unknown;
  if (encoding === 'base64') transaction = [Buffer.from(tx.bytes).toString('base64'), 'base64'];
  else if (encoding === 'base58') transaction = [base58.encode.decode(tx.bytes), 'base58'];
  else if (encoding === 'json' || encoding === 'jsonParsed') {
    const parsed = encoding === 'jsonParsed';
    transaction = {
      signatures: tx.signatures,
      message: {
        accountKeys: parsed
          ? tx.accountKeys.map((pubkey, i) => ({ pubkey, signer: i < tx.header.numRequiredSignatures, writable: isWritable(tx, i), source: 'transaction' }))
          : tx.accountKeys,
        ...(parsed ? {} : { header: tx.header }),
        recentBlockhash: tx.recentBlockhash,
        instructions: tx.instructions.map((ix) =>
          parsed
            ? { programId: tx.accountKeys[ix.programIdIndex], accounts: ix.accounts.map((i) => tx.accountKeys[i]), data: base58.encode.decode(ix.data), stackHeight: null }
            : { programIdIndex: ix.programIdIndex, accounts: ix.accounts, data: base58.encode.decode(ix.data), stackHeight: null },
        ),
        ...(tx.version === 0 ? { addressTableLookups: tx.addressTableLookups } : {}),
      },
    };
  } else throw new RpcError(INVALID_PARAMS, `unsupported encoding: ${encoding}`);
  return {
    slot: record.slot,
    blockTime: record.blockTime,
    transaction,
    meta: {
      err: record.err,
      status: record.err === null ? { Ok: null } : { Err: record.err },
      fee: record.fee,
      preBalances: record.preBalances,
      postBalances: record.postBalances,
      innerInstructions: record.innerInstructions.map(encodeInnerInstructions),
      logMessages: record.logs,
      preTokenBalances: record.preTokenBalances,
      postTokenBalances: record.postTokenBalances,
      rewards: [],
      loadedAddresses: { writable: [], readonly: [] },
      computeUnitsConsumed: record.unitsConsumed,
    },
    ...(withVersion ? { version: tx.version } : {}),
  };
}
