#!/usr/bin/env node
// The package's bin: the compiled command in dist/cli.js. A file of its own so that npm links the
// bin at install time even inside the repository, where dist/ is built after linking (the root's
// `prepare` script runs `npm run build:packages`).
import './dist/cli.js';
