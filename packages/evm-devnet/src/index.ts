export { startAnvil, type AnvilProcess } from './anvil-process';
// a child process that dies with the one that started it (the benchmarks' apps)
export { guardChild } from './orphan-guard';
export { startDevnet, type DevnetOptions, type Devnet } from './devnet';
export { writeDevnetInfo, readDevnetInfo, type DevnetInfo } from './devnet-info-file';
export { mnemonicAccount, devnetAccounts, ANVIL_DEFAULT_MNEMONIC, type DevnetAccount } from './test-accounts';
export { signTransferAuthorization, type AuthorizationFields } from './transfer-authorization';
export { setUpDevnetExecutor } from './settlement-executor';
