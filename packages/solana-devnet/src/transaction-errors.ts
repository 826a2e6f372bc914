/**
 * LiteSVM reports errors as native objects and numeric enums; the JSON-RPC speaks Solana's serde JSON
 * (`"BlockhashNotFound"`, `{ "InstructionError": [2, { "Custom": 1 }] }`). The names below follow the order
 * of litesvm's `TransactionErrorFieldless` and `InstructionErrorFieldless` (const enums: not in its runtime).
 */
export type TransactionErrorJson = string | Record<string, unknown>;

const TRANSACTION_ERRORS = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee', 'InvalidAccountForFee',
  'AlreadyProcessed', 'BlockhashNotFound', 'CallChainTooDeep', 'MissingSignatureForFee', 'InvalidAccountIndex', 'SignatureFailure',
  'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance', 'AccountBorrowOutstanding', 'WouldExceedMaxBlockCostLimit',
  'UnsupportedVersion', 'InvalidWritableAccount', 'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData', 'InvalidAddressLookupTableIndex',
  'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit', 'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded', 'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit', 'CommitCancelled',
];

const INSTRUCTION_ERRORS = [
  'GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall', 'InsufficientFunds',
  'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized', 'UninitializedAccount', 'UnbalancedInstruction',
  'ModifiedProgramId', 'ExternalAccountLamportSpend', 'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified',
  'DuplicateAccountIndex', 'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged', 'AccountNotExecutable',
  'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync', 'InvalidError', 'ExecutableDataModified',
  'ExecutableLamportChange', 'ExecutableAccountNotRentExempt', 'UnsupportedProgramId', 'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed',
  'MaxSeedLengthExceeded', 'InvalidSeeds', 'InvalidRealloc', 'ComputationalBudgetExceeded', 'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete', 'ProgramFailedToCompile', 'Immutable', 'IncorrectAuthority',
  'AccountNotRentExempt', 'InvalidAccountOwner', 'ArithmeticOverflow', 'UnsupportedSysvar', 'IllegalOwner',
  'MaxAccountsDataAllocationsExceeded', 'MaxAccountsExceeded', 'MaxInstructionTraceLengthExceeded', 'BuiltinProgramsMustConsumeComputeUnits',
  'BorshIoError',
];

type NativeError = number | { constructor: { name: string }; index?: number; accountIndex?: number; code?: number; msg?: string; err?: () => NativeError };

export function transactionErrorJson(error: unknown): TransactionErrorJson {
  const native = error as NativeError;
  if (typeof native === 'number') return TRANSACTION_ERRORS[native] ?? `UnknownError${native}`;
  switch (native.constructor.name) {
    case 'TransactionErrorInstructionError':
      return { InstructionError: [native.index, instructionErrorJson(native.err!())] };
    case 'TransactionErrorDuplicateInstruction':
      return { DuplicateInstruction: native.index };
    case 'TransactionErrorInsufficientFundsForRent':
      return { InsufficientFundsForRent: { account_index: native.accountIndex } };
    case 'TransactionErrorProgramExecutionTemporarilyRestricted':
      return { ProgramExecutionTemporarilyRestricted: { account_index: native.accountIndex } };
    default:
      return String(error);
  }
}

function instructionErrorJson(error: NativeError): TransactionErrorJson {
  if (typeof error === 'number') return INSTRUCTION_ERRORS[error] ?? `UnknownError${error}`;
  if (error.constructor.name === 'InstructionErrorCustom') return { Custom: error.code };
  if (error.constructor.name === 'InstructionErrorBorshIo') return { BorshIoError: error.msg };
  return String(error);
}

/** The sentence a validator's preflight puts after "Transaction simulation failed: ". */
export function describeTransactionError(error: TransactionErrorJson): string {
  const sentences: Record<string, string> = {
    BlockhashNotFound: 'Blockhash not found',
    AlreadyProcessed: 'This transaction has already been processed',
    AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
    InsufficientFundsForFee: 'Insufficient funds for fee',
    SignatureFailure: 'Transaction did not pass signature verification',
  };
  if (typeof error === 'string') return sentences[error] ?? error;
  const instruction = error.InstructionError as [number, TransactionErrorJson] | undefined;
  if (instruction) {
    const [index, inner] = instruction;
    const detail =
      typeof inner === 'object' && 'Custom' in inner ? `custom program error: 0x${Number(inner.Custom).toString(16)}` : JSON.stringify(inner).replaceAll('"', '');
    return `Error processing Instruction ${index}: ${detail}`;
  }
  return JSON.stringify(error);
}
