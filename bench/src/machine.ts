// What a figure was measured on, so numbers from different machines or versions are never compared blind.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { ROOT, adminDatabaseUrl, REDIS_URL } from './stack';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism?.() ?? cpus.length,
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
  };
}

function packageVersion(name: string): string {
  try {
    const file = require.resolve(`${name}/package.json`, { paths: [ROOT] });
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    // packages with an `exports` map that hides package.json: read it from node_modules directly
    try {
      return (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      return 'unknown';
    }
  }
}

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'apps', 'packages'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${head} (apps/packages modified)` : head;
  } catch {
    return 'unknown';
  }
}

export async function versions(): Promise<Record<string, string>> {
  const names = ['express', 'ajv', '@prisma/client', 'pg', 'bullmq', 'ioredis', 'ethers', 'secp256k1', 'winston', 'autocannon', '@x402/evm', '@x402/core', 'viem', '@foundry-rs/anvil'];
  const found: Record<string, string> = { commit: gitCommit() };
  for (const name of names) found[name] = packageVersion(name);
  found.postgres = await postgresVersion();
  found.redis = await redisVersion();
  return found;
}

async function postgresVersion(): Promise<string> {
  const client = new Client({ connectionString: adminDatabaseUrl() });
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0].server_version;
  } catch {
    return 'unknown';
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function redisVersion(): Promise<string> {
  const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    const info = await redis.info('server');
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  } finally {
    redis.disconnect();
  }
}
