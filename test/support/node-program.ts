import { spawn } from 'node:child_process';

export interface ProgramRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node <args>` as a child process with exactly `env` (nothing of this process's environment unless
 * the caller passes it), optionally writing `input` to its stdin, and collects what it printed.
 */
export function runNodeProgram(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<ProgramRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (input !== undefined) child.stdin!.end(input);
  });
}
