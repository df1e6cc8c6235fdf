// Spawning the contract tools with telemetry off and output captured.
import { spawn } from 'node:child_process';
import { ROOT, TOOL_ENV } from './specs.ts';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: readonly string[], opts: { cwd?: string } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd ?? ROOT, env: TOOL_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
