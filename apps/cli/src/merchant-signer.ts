import { readFileSync } from 'node:fs';
import { decryptKeystoreJson, isKeystoreJson, Wallet } from 'ethers';
import { read } from 'read';
import { EnvReader, type Env } from '@facilitator/config';
import { CliError } from './errors';

export interface MerchantKey {
  wallet: Wallet;
  /** where the key came from, for the user */
  source: string;
}

/**
 * The merchant's signing key: a keystore file (`--keystore` or `MERCHANT_KEYSTORE`) unlocked with
 * `MERCHANT_KEYSTORE_PASSWORD` or a password typed at a hidden prompt; otherwise `MERCHANT_PRIVATE_KEY`.
 * Never a flag: command lines end up in shell history and `ps`.
 */
export async function loadMerchantKey(keystoreFlag: string | undefined, env: Env = process.env): Promise<MerchantKey> {
  const reader = new EnvReader(env);
  const keystore = keystoreFlag ?? reader.raw('MERCHANT_KEYSTORE');
  if (keystore !== undefined) return fromKeystore(keystore, env);
  const key = reader.raw('MERCHANT_PRIVATE_KEY');
  if (key === undefined) {
    throw new CliError('no merchant key: set MERCHANT_PRIVATE_KEY, or pass --keystore <file> (an encrypted JSON keystore)');
  }
  const { privateKey } = reader.privateKey('MERCHANT_PRIVATE_KEY', key);
  return { wallet: new Wallet(privateKey), source: 'MERCHANT_PRIVATE_KEY' };
}

async function fromKeystore(file: string, env: Env): Promise<MerchantKey> {
  let json: string;
  try {
    json = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read the keystore ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!isKeystoreJson(json)) throw new CliError(`${file} is not an encrypted JSON keystore (Web3 Secret Storage, as geth, cast and ethers write)`);
  const password = env.MERCHANT_KEYSTORE_PASSWORD ?? (await promptPassword(file));
  let account;
  try {
    account = await decryptKeystoreJson(json, password);
  } catch (err) {
    const message = (err as Error).message;
    throw new CliError(/password/i.test(message) ? `wrong password for the keystore ${file}` : `cannot decrypt the keystore ${file}: ${message}`);
  }
  return { wallet: new Wallet(account.privateKey), source: `keystore ${file}` };
}

async function promptPassword(file: string): Promise<string> {
  if (!process.stdin.isTTY) {
    throw new CliError('the keystore needs a password: set MERCHANT_KEYSTORE_PASSWORD, or run in a terminal to be asked for it');
  }
  try {
    const password = await read({ prompt: `password for ${file}: `, silent: true, replace: '', output: process.stderr });
    process.stderr.write('\n');
    return password;
  } catch {
    throw new CliError('no password given');
  }
}
