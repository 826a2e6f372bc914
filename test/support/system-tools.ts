// Tests that need a system tool the project does not install through npm (Chromium, docker-compose,
// unshare as root, redis-server, SoftHSM2). On a newcomer's machine without it, the suite is skipped with one
// line naming the tool and how to install it; under CI=true or TEST_REQUIRE_ALL=1 (where .ci/run installs
// everything) a missing tool fails the run instead, so CI can never go green by skipping.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export function everyTestRequired(): boolean {
  return process.env.CI === 'true' || process.env.TEST_REQUIRE_ALL === '1';
}

/** Why the tool is missing, with how to install it; undefined when it is there. */
export type MissingTool = string | undefined;

export function chromiumMissing(path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'): MissingTool {
  return existsSync(path) ? undefined : `Chromium is not installed at ${path} (apt-get install -y chromium, or set CHROMIUM_PATH)`;
}

export function dockerComposeMissing(): MissingTool {
  return spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0 ? undefined : 'docker-compose is not installed (apt-get install -y docker-compose)';
}

export function redisServerMissing(): MissingTool {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).error ? 'redis-server is not installed (apt-get install -y redis-server)' : undefined;
}

/** SoftHSM2, a real PKCS#11 token in files: the HSM signer's tests keep a secp256k1 key in it. */
export function softhsmMissing(modulePath = process.env.SOFTHSM2_MODULE ?? '/usr/lib/softhsm/libsofthsm2.so'): MissingTool {
  const installed = existsSync(modulePath) && !spawnSync('softhsm2-util', ['--version'], { stdio: 'ignore' }).error;
  return installed ? undefined : `SoftHSM2 is not installed (apt-get install -y softhsm2; or set SOFTHSM2_MODULE to its libsofthsm2.so)`;
}

export function bareNamespaceMissing(): MissingTool {
  if (process.getuid?.() !== 0) return 'making a network namespace needs root (unshare -n); run the suite as root';
  return spawnSync('unshare', ['-n', 'true']).status === 0 ? undefined : 'unshare -n does not work here (util-linux, and a kernel that allows network namespaces)';
}

/**
 * `describe` for tests that need a system tool: run when it is there; without it, skipped with one line
 * saying what is missing and how to install it, or (CI=true, TEST_REQUIRE_ALL=1) one failing test saying so.
 * Nothing of the suite (its beforeAll included) runs when it is skipped or failed this way.
 */
export function describeNeeding(missing: MissingTool, name: string, body: () => void): void {
  if (!missing) {
    describe(name, body);
    return;
  }
  if (everyTestRequired()) {
    describe(name, () => {
      it(`needs a tool that is missing: ${missing}`, () => {
        throw new Error(`${missing}; CI=true or TEST_REQUIRE_ALL=1 runs every test, so a missing tool fails instead of skipping`);
      });
    });
    return;
  }
  process.stdout.write(`skipped "${name}": ${missing}\n`);
  describe.skip(name, body);
}
