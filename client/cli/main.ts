// The `payments-webhooks` command: parses the arguments, runs `listen`, `resend` or `trigger`, and turns
// the outcome into an exit code (0 done or stopped with Ctrl-C, 1 refused or unreachable, 2
// bad usage). Ctrl-C ends `listen` cleanly: the connection is closed and the cursor kept.
import { listen } from './listen.ts';
import { resend } from './resend.ts';
import { parseCommandLine, UsageError, USAGE } from './args.ts';
import { CliError } from './preflight.ts';
import { consoleOutput, type Output } from './printer.ts';
import { trigger } from './trigger.ts';

export interface MainDeps {
  output: Output;
  env: NodeJS.ProcessEnv;
  /** Ends a running `listen` (Ctrl-C). */
  signal: AbortSignal;
}

export async function main(argv: readonly string[], deps: MainDeps): Promise<number> {
  const { output } = deps;
  let args: ReturnType<typeof parseCommandLine>;
  try {
    args = parseCommandLine(argv, deps.env);
  } catch (err) {
    output.err(`payments-webhooks: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  try {
    if (args.command === 'help') output.out(USAGE);
    else if (args.command === 'trigger') await trigger(args, output);
    else if (args.command === 'resend') await resend(args, { output, now: Date.now, sleep, signal: deps.signal });
    else await listen(args, deps.signal, { output, env: deps.env, now: Date.now, sleep });
    return 0;
  } catch (err) {
    if (err instanceof CliError || err instanceof UsageError) {
      output.err(`payments-webhooks: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** The process entry (bin.ts): real console, environment and Ctrl-C. */
export async function run(): Promise<void> {
  const stop = new AbortController();
  const onSignal = (): void => {
    // A second Ctrl-C while stopping quits at once.
    if (stop.signal.aborted) process.exit(130);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.exitCode = await main(process.argv.slice(2), { output: consoleOutput, env: process.env, signal: stop.signal });
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}
