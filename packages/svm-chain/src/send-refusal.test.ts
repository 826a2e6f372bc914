import {
  SolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM,
} from '@solana/kit';
import { sendRefusalOf, SvmSendRefused } from './send-refusal';

const preflight = (cause: Error) =>
  new SolanaError(SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE, {
    accounts: null,
    innerInstructions: null,
    loadedAccountsDataSize: undefined,
    logs: ['Program log: Error: insufficient funds'],
    replacementBlockhash: null,
    returnData: null,
    unitsConsumed: 10n,
    cause,
  } as never);

describe('sendRefusalOf', () => {
  it("reads kit's preflight failures: already processed (a resend: success), expired blockhash, failed simulation with its logs", () => {
    expect(sendRefusalOf(preflight(new SolanaError(SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)))).toBe('already_processed');
    expect(sendRefusalOf(preflight(new SolanaError(SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)))).toMatchObject({ kind: 'blockhash_not_found' });
    const failed = sendRefusalOf(preflight(new SolanaError(SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM, { code: 1, index: 1 })));
    expect(failed).toBeInstanceOf(SvmSendRefused);
    expect(failed).toMatchObject({ kind: 'simulation_failed', logs: ['Program log: Error: insufficient funds'] });
  });

  it('reads a signature failure, and leaves anything else (no answer: maybe sent) unread', () => {
    expect(sendRefusalOf(new SolanaError(SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, { __serverMessage: 'x' } as never))).toMatchObject({ kind: 'signature_failure' });
    expect(sendRefusalOf(Object.assign(new Error('fetch failed'), { code: 'ECONNRESET' }))).toBeUndefined();
  });
});
