// No Docker engine runs here: the compose file is validated by docker-compose itself (offline) and its
// operational promises are checked on the parsed file.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describeNeeding, dockerComposeMissing } from './support/system-tools';

const FILE = path.resolve(__dirname, '../docker-compose.yml');

describeNeeding(dockerComposeMissing(), 'docker-compose.yml read by docker-compose', () => {
  it('is valid for docker-compose (config -q)', () => {
    expect(() => execFileSync('docker-compose', ['-f', FILE, 'config', '-q'], { stdio: 'pipe' })).not.toThrow();
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(FILE, 'utf8'));

  it('runs postgres, redis, a local chain, migrations, api and worker', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'chain', 'migrate', 'postgres', 'redis', 'worker']);
  });

  it('gives Redis what BullMQ requires: AOF persistence and noeviction', () => {
    const command: string[] = compose.services.redis.command;
    expect(command.join(' ')).toContain('--appendonly yes');
    expect(command.join(' ')).toContain('--maxmemory-policy noeviction');
  });

  it('lets the worker scale: no container name, no host ports', () => {
    expect(compose.services.worker.container_name).toBeUndefined();
    expect(compose.services.worker.ports).toBeUndefined();
  });

  it('builds from the Dockerfile in the repo: the services from its runtime image, the local chain from its build stage', () => {
    expect(readFileSync(path.resolve(__dirname, '../Dockerfile'), 'utf8')).toContain('npm run build');
    for (const name of ['api', 'worker', 'migrate']) expect(compose.services[name].build).toBe('.');
    expect(compose.services.chain.build).toEqual({ context: '.', target: 'build' });
  });

  it("runs the API as its own database role, which writes none of the worker's rows (issue 40)", () => {
    expect(compose.services.migrate.command.join(' ')).toContain('packages/db/dist/api-role-cli.js');
    expect(new URL(compose.services.api.environment.DATABASE_URL).username).toBe('facilitator_api');
    expect(new URL(compose.services.worker.environment.DATABASE_URL).username).toBe('postgres');
  });
});
