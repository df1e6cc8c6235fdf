#!/usr/bin/env node
// The `payments-webhooks` executable (package.json "bin"); everything is in main.ts.
import { run } from './main.ts';

await run();
