// A real PKCS#11 token for tests: Debian's SoftHSM2 (`apt-get install -y softhsm2`) with its tokens in a
// temporary directory. SOFTHSM2_CONF is process-wide and read at C_Initialize, so every token a process
// makes lives in one temporary SoftHSM home (made with the first, removed with the last); make the tokens
// before opening signers on them (SoftHSM sees a token made later once no signer holds the library).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runInThisContext } from 'node:vm';
import { computeAddress, hexlify, randomBytes } from 'ethers';
import { ED25519_EC_PARAMS, SECP256K1_EC_PARAMS, ed25519PublicKeyFromEcPoint, publicKeyFromEcPoint } from '../der';
import { base58 } from '../ed25519/base58';
import { acquireLibrary, pkcs11js } from '../pkcs11/pkcs11-module';

const run = promisify(execFile);

export const SOFTHSM_MODULE_PATH = process.env.SOFTHSM2_MODULE ?? '/usr/lib/softhsm/libsofthsm2.so';

export interface SoftHsmTokenOptions {
  label: string;
  /** The user PIN (4 to 255 characters); default a random one. */
  pin?: string;
}

export interface SoftHsmToken {
  readonly label: string;
  readonly pin: string;
  readonly modulePath: string;
  /** A file holding the PIN (mode 0600), for `pin-source=file:`. */
  readonly pinFile: string;
  /** The environment a child process needs to see this token (SOFTHSM2_CONF). */
  readonly env: Record<string, string>;
  /**
   * Makes a non-extractable key pair labelled `keyLabel`, secp256k1 unless `curve` says Ed25519; answers its
   * URI and address (an EVM address, or the base58 public key of an Ed25519 key).
   */
  generateKey(keyLabel: string, options?: { pin?: 'file' | 'value'; curve?: 'secp256k1' | 'ed25519' }): Promise<{ uri: string; address: string }>;
  /** The URI of a key on this token (it need not exist: tests of a missing key). */
  uri(keyLabel: string, options?: { pin?: 'file' | 'value'; pinValue?: string; sessions?: number }): string;
  /** Deletes the token, and the temporary SoftHSM home with the process's last token. */
  destroy(): Promise<void>;
}

/**
 * The environment SoftHSM reads. Under jest, `process.env` is a copy per test file and setting it does not
 * reach the C environment a native library reads at C_Initialize; code run in the main context sees the
 * process's real one (outside jest it is the same object).
 */
const realEnv = (runInThisContext('process') as NodeJS.Process).env;

function setConf(value: string | undefined): void {
  for (const env of new Set([process.env, realEnv])) {
    if (value === undefined) delete env.SOFTHSM2_CONF;
    else env.SOFTHSM2_CONF = value;
  }
}

interface Home {
  dir: string;
  previousConf: string | undefined;
  tokens: number;
}

let home: Home | undefined;

function enterHome(): Home {
  if (!home) {
    const dir = mkdtempSync(path.join(tmpdir(), 'softhsm-'));
    const tokens = path.join(dir, 'tokens');
    writeFileSync(path.join(dir, 'softhsm2.conf'), `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`);
    mkdirSync(tokens);
    home = { dir, previousConf: realEnv.SOFTHSM2_CONF, tokens: 0 };
    setConf(path.join(dir, 'softhsm2.conf'));
  }
  home.tokens++;
  return home;
}

function leaveHome(): void {
  if (!home || --home.tokens > 0) return;
  rmSync(home.dir, { recursive: true, force: true });
  setConf(home.previousConf);
  home = undefined;
}

/** `softhsm2-util --init-token --free` in a temporary SoftHSM home; `generateKey` puts keys on it. */
export async function createSoftHsmToken(options: SoftHsmTokenOptions): Promise<SoftHsmToken> {
  const pin = options.pin ?? hexlify(randomBytes(8)).slice(2);
  const { dir } = enterHome();
  const env = { SOFTHSM2_CONF: path.join(dir, 'softhsm2.conf') };
  try {
    await run('softhsm2-util', ['--init-token', '--free', '--label', options.label, '--pin', pin, '--so-pin', hexlify(randomBytes(8)).slice(2)], {
      env: { ...process.env, ...env },
    });
  } catch (error) {
    leaveHome();
    throw new Error(`softhsm2-util --init-token failed: ${((error as { stderr?: string }).stderr ?? (error as Error).message).trim()}`);
  }
  const pinFile = path.join(dir, `${options.label}.pin`);
  writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 });

  const uriOf: SoftHsmToken['uri'] = (keyLabel, uriOptions = {}) => {
    const pinPart = uriOptions.pin === 'value' || uriOptions.pinValue !== undefined ? `pin-value=${encodeURIComponent(uriOptions.pinValue ?? pin)}` : `pin-source=file:${pinFile}`;
    const sessions = uriOptions.sessions ? `&x-sessions=${uriOptions.sessions}` : '';
    return `pkcs11:token=${encodeURIComponent(options.label)};object=${encodeURIComponent(keyLabel)}?module-path=${SOFTHSM_MODULE_PATH}&${pinPart}${sessions}`;
  };

  let destroyed = false;
  return {
    label: options.label,
    pin,
    modulePath: SOFTHSM_MODULE_PATH,
    pinFile,
    env,
    uri: uriOf,
    async generateKey(keyLabel, keyOptions = {}) {
      const p = pkcs11js();
      const library = acquireLibrary(SOFTHSM_MODULE_PATH);
      const { pkcs11 } = library;
      try {
        const slot = pkcs11.C_GetSlotList(true).find((s) => pkcs11.C_GetTokenInfo(s).label.trimEnd() === options.label);
        if (!slot) throw new Error(`token ${options.label} is not visible: make tokens before opening signers on SoftHSM`);
        const session = pkcs11.C_OpenSession(slot, p.CKF_SERIAL_SESSION | p.CKF_RW_SESSION);
        try {
          try {
            pkcs11.C_Login(session, p.CKU_USER, pin);
          } catch (error) {
            if ((error as { code?: number }).code !== p.CKR_USER_ALREADY_LOGGED_IN) throw error;
          }
          const id = Buffer.from(randomBytes(8));
          const common = [
            { type: p.CKA_TOKEN, value: true },
            { type: p.CKA_LABEL, value: keyLabel },
            { type: p.CKA_ID, value: id },
          ];
          const ed25519 = keyOptions.curve === 'ed25519';
          const keys = pkcs11.C_GenerateKeyPair(
            session,
            // CKM_EC_EDWARDS_KEY_PAIR_GEN (PKCS#11 3.0), which pkcs11js 2.1 does not name
            { mechanism: ed25519 ? 0x1055 : p.CKM_EC_KEY_PAIR_GEN },
            [
              { type: p.CKA_CLASS, value: p.CKO_PUBLIC_KEY },
              { type: p.CKA_VERIFY, value: true },
              { type: p.CKA_EC_PARAMS, value: Buffer.from(ed25519 ? ED25519_EC_PARAMS : SECP256K1_EC_PARAMS) },
              ...common,
            ],
            // the private key never leaves the token: sensitive, not extractable, private to a logged-in user
            [
              { type: p.CKA_CLASS, value: p.CKO_PRIVATE_KEY },
              { type: p.CKA_SIGN, value: true },
              { type: p.CKA_PRIVATE, value: true },
              { type: p.CKA_SENSITIVE, value: true },
              { type: p.CKA_EXTRACTABLE, value: false },
              ...common,
            ],
          );
          const [point] = pkcs11.C_GetAttributeValue(session, keys.publicKey, [{ type: p.CKA_EC_POINT }]);
          const address = ed25519 ? base58(ed25519PublicKeyFromEcPoint(point.value)) : computeAddress(hexlify(publicKeyFromEcPoint(point.value)));
          return { uri: uriOf(keyLabel, { pin: keyOptions.pin }), address };
        } finally {
          pkcs11.C_CloseSession(session);
        }
      } finally {
        library.release();
      }
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      try {
        await run('softhsm2-util', ['--delete-token', '--token', options.label], { env: { ...process.env, ...env } });
      } finally {
        leaveHome();
      }
    },
  };
}
