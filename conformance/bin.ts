#!/usr/bin/env node
// payments-conformance <target> [options]: the conformance suite's command line (compiled to
// dist/bin.js for the package; from source: `npm run conformance -- ...`, which runs it with tsx).
// `npm run conformance -- receiver --url http://127.0.0.1:3000/webhooks/payments --secret whsec_...`
import { runCli } from './core/cli.ts';
import { createTargetRegistry } from './targets.ts';

const controller = new AbortController();
// First Ctrl-C: stop after the running check and still write the reports; second: quit.
process.once('SIGINT', () => {
  controller.abort(new Error('interrupted'));
  process.once('SIGINT', () => process.exit(130));
});

const stdout = process.stdout;
process.exitCode = await runCli(process.argv.slice(2), createTargetRegistry(), {
  stdout: { write: (s: string) => stdout.write(s), isTTY: stdout.isTTY === true, columns: stdout.columns },
  stderr: { write: (s: string) => process.stderr.write(s) },
  signal: controller.signal,
});
