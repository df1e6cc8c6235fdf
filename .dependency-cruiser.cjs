// The layering of the project, checked by `npm run lint:deps` (part of `npm test`).
//
//   spec/ → generated/ → server/domain (model.ts owns the vocabulary) → server/store
//
// A layer imports only from layers before it: generated/ from nothing of ours, the domain
// from generated/ and the small shared modules below (signing/, contract/, server/money/,
// server/destination/), the store from the domain's model and the Store port the domain owns
// (server/domain/store.ts, store-errors.ts): the domain never imports the store. HTTP, the
// handlers (server/api/), the portal, the delivery engine and the admin tool sit on top and may
// use everything below; server/app/ composes them into the server. client/ and the conformance suite stand beside the
// server and import nothing from it.

const TEST = '(^|/)(testing|suite)/|\\.test\\.tsx?$|\\.e2e\\.test\\.tsx?$';
/** Test support: what only tests may import (testing/ and suite/ folders, testing.ts files), and the tests. */
const TEST_SIDE = `${TEST}|(^|/)testing\\.tsx?$`;
/** Where production starts: the server, the admin tool, and the scripts (none of them a test). */
const PRODUCTION_ENTRIES = '^server/(main|admin/cli|delivery/thread/sender-thread)\\.ts$|^scripts/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means two modules are one; split what they share into a module both import.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'generated-is-generated',
      severity: 'error',
      comment: 'generated/ comes from spec/ only and imports nothing of ours.',
      from: { path: '^generated/' },
      to: { path: '^(server|client|conformance|contract|scripts|signing)/' },
    },
    {
      name: 'contract-reader-stands-alone',
      severity: 'error',
      comment: 'contract/ reads the documents for the server and the conformance suite alike: it imports generated/ only.',
      from: { path: '^contract/', pathNot: TEST },
      to: { path: '^(server|client|conformance|scripts|signing)/' },
    },
    {
      name: 'shared-modules-stand-alone',
      severity: 'error',
      comment: 'signing/ and server/money/ are used by the server and the helpers alike: they import no layer.',
      from: { path: '^(signing|server/money)/', pathNot: TEST },
      to: { path: '^(server|client|conformance|scripts)/', pathNot: '^(signing|server/money)/' },
    },
    {
      name: 'model-from-the-contract-only',
      severity: 'error',
      comment: 'The domain model is the contract\'s vocabulary: it imports generated/ and nothing else of ours.',
      from: { path: '^server/domain/model\\.ts$' },
      to: { path: '^(server|client|conformance|scripts|signing)/' },
    },
    {
      name: 'domain-knows-no-transport',
      severity: 'error',
      comment: 'The domain knows neither HTTP nor SQL: no hono, no database driver, no undici.',
      from: { path: '^server/domain/', pathNot: TEST },
      to: { dependencyTypes: ['npm', 'npm-dev'], path: '(^|/)node_modules/(hono|@hono|pg|better-sqlite3|undici)/' },
    },
    {
      name: 'domain-below-its-callers',
      severity: 'error',
      comment:
        'The domain imports generated/ and the shared modules; never the HTTP layer, the portal, the delivery engine, ' +
        'client/ or scripts/. It owns the Store port (domain/store.ts), so it never imports server/store/ (next rule).',
      from: { path: '^server/domain/', pathNot: TEST },
      to: {
        path: '^(server/|client/|conformance/|scripts/)',
        pathNot: '^server/(domain|money|destination)/',
      },
    },
    {
      name: 'domain-never-imports-store',
      severity: 'error',
      comment:
        'The Store port lives in the domain (domain/store.ts, store-errors.ts) and the implementations import it from there: ' +
        'nothing in the domain, its tests included, imports server/store/.',
      from: { path: '^server/domain/' },
      to: { path: '^server/store/' },
    },
    {
      name: 'store-below-the-domain',
      severity: 'error',
      comment:
        'The store persists the domain\'s records: it implements the port (domain/store.ts, store-errors.ts, store-unavailable.ts, and unit-observer.ts: what the committers tell tracing) and imports the model ' +
        '(domain/model.ts), server/money/ and the timers (timers.ts), never domain logic, HTTP, the portal or the delivery engine.',
      from: { path: '^server/store/', pathNot: TEST },
      to: { path: '^(server/|client/|conformance/|scripts/)', pathNot: '^server/(store|money)/|^server/(domain/model|domain/store|domain/store-errors|domain/store-unavailable|domain/unit-observer|timers)\\.ts$' },
    },
    {
      name: 'store-behind-its-port',
      severity: 'error',
      comment:
        'Above the store, code knows the Store port (domain/store.ts, store-errors.ts, store-unavailable.ts), not an ' +
        'implementation: only the composition roots (server/services.ts; server/main.ts, which registers a PostgreSQL ' +
        "instance's heartbeat; the admin tool's migration and instance commands) and test support open server/store/.",
      from: { path: '^server/', pathNot: `^server/store/|^server/(services|main)\\.ts$|^server/admin/|${TEST}` },
      to: { path: '^server/store/' },
    },
    {
      name: 'destination-policy-stands-alone',
      severity: 'error',
      comment: 'The destination policy is checked by the domain (save time) and the sender (connect time): it imports neither.',
      from: { path: '^server/destination/', pathNot: TEST },
      to: { path: '^(server/|client/|conformance/|scripts/)', pathNot: '^server/destination/' },
    },
    {
      name: 'handlers-do-not-compose',
      severity: 'error',
      comment:
        'A handler (server/api/) maps a validated request to a domain call. Composing the server (the delivery ' +
        'engine, the portal, the operator\'s metrics, the lifecycle) is server/app/\'s: the handlers import none of it, ' +
        'nor a store implementation.',
      from: { path: '^server/api/', pathNot: TEST },
      to: {
        path: '^server/(app|delivery|portal|observability|lifecycle|admin|faults|store)/|^server/(main|services|runtime)\\.ts$',
      },
    },
    {
      name: 'server-not-from-scripts',
      severity: 'error',
      comment:
        'Scripts use the server, not the other way round. Known exception: server/http/docs.ts → scripts/docs.ts ' +
        '(the /docs page), which issue 10 moves.',
      from: { path: '^server/', pathNot: '^server/http/docs\\.ts$' },
      to: { path: '^scripts/' },
    },
    {
      name: 'test-support-stands-alone',
      severity: 'error',
      comment:
        'testing/ holds what tests of every layer share (until()); it imports no layer, and only tests and test helpers import it.',
      from: { path: '^testing/' },
      to: { path: '^(server|client|conformance|conformance-tests|contract|scripts|signing|generated)/' },
    },
    {
      name: 'production-imports-no-test-support',
      severity: 'error',
      comment:
        'Production code never imports test support (a testing/ or suite/ folder, a testing.ts, a test file): a ' +
        'software authenticator\'s key pair or a fake belongs to the tests. Known exceptions: client/webhooks/testing.ts ' +
        'is a shipped helper for merchants\' own tests; server/fuzz/ and server/faults/ are test tools in server/ ' +
        '(issue 62 moves them).',
      from: { path: '^(server|client|conformance|contract|signing|generated)/', pathNot: `${TEST_SIDE}|^server/(fuzz|faults)/` },
      to: { path: TEST_SIDE, pathNot: '^client/webhooks/testing\\.ts$' },
    },
    {
      name: 'test-support-not-in-production-folders',
      severity: 'error',
      comment:
        'A TypeScript module of server/ that no production entry point (the server, the admin tool, the scripts) reaches ' +
        'is used by tests only: test support in a production folder, whatever its name. Move it to a testing/ folder. ' +
        'Known exceptions: server/faults/ and server/fuzz/ (above).',
      from: { path: PRODUCTION_ENTRIES, pathNot: TEST_SIDE },
      to: { path: '^server/.+\\.tsx?$', pathNot: `${TEST_SIDE}|^server/(fuzz|faults)/|${PRODUCTION_ENTRIES}`, reachable: false },
    },
    {
      name: 'server-loads-no-build-tooling',
      severity: 'error',
      comment:
        'The server, its sending thread and the admin tool never load the bundler (server/build/bundle.ts) or esbuild: ' +
        '`npm start` rebuilds before it starts node, and the programs find their bundles through server/build/layout.ts.',
      from: { path: '^server/(main|admin/cli|delivery/thread/sender-thread)\\.ts$' },
      to: { path: '^server/build/bundle\\.ts$|(^|/)node_modules/esbuild/', reachable: true },
    },
    {
      name: 'client-not-from-server',
      severity: 'error',
      comment: 'The client and the receiver helpers are what merchants run: nothing from the server.',
      from: { path: '^client/' },
      to: { path: '^(server|conformance|scripts)/' },
    },
    {
      name: 'conformance-not-from-server',
      severity: 'error',
      comment:
        'The conformance suite checks any implementation from the documents and ships as its own package, so nothing ' +
        'in conformance/ (its unit tests included) imports server/, client/ or scripts/. What it shares with the ' +
        'server comes from generated/, contract/ and signing/. The tests that start the bundled server live in ' +
        'conformance-tests/.',
      from: { path: '^conformance/' },
      to: { path: '^(server|client|scripts|conformance-tests)/' },
    },
    {
      name: 'conformance-targets-stand-apart',
      severity: 'error',
      comment:
        'Each target folder of the conformance suite (api/, receiver/, sender/) imports core/ and itself, never another ' +
        'target: what two targets share (seeds, outcomes, the OpenAPI client, body forms) lives in conformance/core/.',
      from: { path: '^conformance/(api|receiver|sender)/' },
      to: { path: '^conformance/(api|receiver|sender)/', pathNot: '^conformance/$1/' },
    },
    {
      name: 'conformance-core-below-targets',
      severity: 'error',
      comment: 'conformance/core/ is what every target builds on (defineCheck, coverage, the runner): it imports no target.',
      from: { path: '^conformance/core/' },
      to: { path: '^conformance/(api|receiver|sender)/' },
    },
    {
      name: 'packages-without-server-dependencies',
      severity: 'error',
      comment:
        'The payments-conformance and payments-webhooks packages install none of the server\'s dependencies: ' +
        'no web framework, no database driver, no logger or metrics.',
      from: { path: '^(conformance/|client/webhooks/|client/api\\.ts$)', pathNot: TEST },
      to: { dependencyTypes: ['npm', 'npm-dev'], path: '(^|/)node_modules/(hono|@hono|pg|better-sqlite3|pino|prom-client)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(docs|data|dist|coverage)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
