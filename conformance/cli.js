#!/usr/bin/env node
// The package's bin: the compiled suite in dist/bin.js. A file of its own so that npm links the
// bin at install time even inside the repository, where dist/ is built after linking (the root's
// `prepare` script runs `npm run build:packages`).
import './dist/bin.js';
