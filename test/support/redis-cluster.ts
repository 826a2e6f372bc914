// A real 3-node Redis Cluster on loopback ports, started and torn down by the test that needs it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RedisCluster {
  nodes: Array<{ host: string; port: number }>;
  /** REDIS_CLUSTER_NODES value */
  spec: string;
  stop(): Promise<void>;
}


function cli(port: number, ...args: string[]) {
  return spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' });
}

/** Up to three tries on other random ports: a node whose port (or bus port) is taken exits at once. */
export async function startRedisCluster(): Promise<RedisCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnRandomPorts();
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

async function startOnRandomPorts(): Promise<RedisCluster> {
  // ports in 21000-28999; the cluster bus uses port + 10000
  const base = 21000 + Math.floor(Math.random() * 2600) * 3;
  const ports = [base, base + 1, base + 2];
  const dir = mkdtempSync(path.join(tmpdir(), 'redis-cluster-'));
  const children: ChildProcess[] = ports.map((port) =>
    spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
        '--appendonly', 'no', '--save', '', '--dir', dir],
      { stdio: 'ignore' },
    ),
  );
  const stop = async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // a busy machine may take a while to start three servers: up to 15 s, and a clear error after it
    for (const [index, port] of ports.entries()) {
      for (let i = 0; i < 300 && cli(port, 'ping').stdout.trim() !== 'PONG'; i++) {
        if (children[index].exitCode !== null) throw new Error(`redis-server on port ${port} exited (${children[index].exitCode})`);
        await sleep(50);
      }
      if (cli(port, 'ping').stdout.trim() !== 'PONG') throw new Error(`redis-server on port ${port} did not answer within 15 s`);
    }
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
    });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    for (let i = 0; i < 200; i++) {
      if (ports.every((p) => cli(p, 'cluster', 'info').stdout.includes('cluster_state:ok'))) break;
      await sleep(50);
    }
    if (!ports.every((p) => cli(p, 'cluster', 'info').stdout.includes('cluster_state:ok'))) throw new Error('cluster never became ok');
  } catch (err) {
    await stop();
    throw err;
  }
  const nodes = ports.map((port) => ({ host: '127.0.0.1', port }));
  return { nodes, spec: nodes.map((n) => `${n.host}:${n.port}`).join(','), stop };
}
