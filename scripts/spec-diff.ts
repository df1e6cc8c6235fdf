// npm run spec:diff [-- --base <git ref>] [--all]: lists the breaking changes of spec/ (the
// working tree) against an earlier version, per operation and message, and fails on any that
// spec/breaking-changes.yaml does not accept. See scripts/lib/spec-diff.ts for how.
//
// The base: --base when given; otherwise `main`; when the checkout is on `main` itself (CI on
// the submitted main), the newest `spec-v*` tag reachable from HEAD, else HEAD's first parent (the
// main before the last merge). The command itself is scripts/lib/spec-diff-cli.ts.
import { specDiffCli } from './lib/spec-diff-cli.ts';

process.exitCode = await specDiffCli(process.argv.slice(2), { out: (line) => console.log(line), err: (line) => console.error(line) });
