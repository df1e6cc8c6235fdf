// npm run spec:diff on scratch git repositories holding a small contract: a breaking change
// fails and is named per operation and message, an accepted one passes, a compatible one passes.
// The first case runs the command as a process (the run's bundle of scripts/spec-diff.ts); the
// others run the same command in this process (scripts/lib/spec-diff-cli.ts), which spares a
// process start of about two seconds of CPU each.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { childEntry } from '../server/testing/server-bundle.ts';
import { specDiffCli } from './lib/spec-diff-cli.ts';

const OPENAPI = `openapi: 3.1.0
info:
  title: Things
  version: 1.0.0
  license: { name: Proprietary, url: https://example.invalid/terms }
servers:
  - url: https://api.example.invalid
paths:
  /things:
    post:
      operationId: createThing
      summary: Create a thing
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: './common/schemas.yaml#/ThingRequest' }
      responses:
        '201':
          description: Created
          content:
            application/json:
              schema: { $ref: './common/schemas.yaml#/Thing' }
`;

const ASYNCAPI = `asyncapi: 3.0.0
info:
  title: Thing events
  version: 1.0.0
channels:
  things:
    address: null
    messages:
      thingCreated:
        $ref: '#/components/messages/thingCreated'
operations:
  sendThingCreated:
    action: send
    channel: { $ref: '#/channels/things' }
    messages:
      - $ref: '#/channels/things/messages/thingCreated'
components:
  messages:
    thingCreated:
      payload: { $ref: './common/schemas.yaml#/ThingCreatedEvent' }
`;

const SCHEMAS = `ThingRequest:
  type: object
  required: [name]
  properties:
    name: { type: string }
  additionalProperties: false
Thing:
  type: object
  required: [id, name]
  properties:
    id: { type: string }
    name: { type: string }
  additionalProperties: false
ThingCreatedEvent:
  type: object
  required: [id, thingName]
  properties:
    id: { type: string }
    thingName: { type: string }
`;

// A workflow of the contract (spec/workflows/), compared as operations are.
const WORKFLOW = `arazzo: 1.0.1
info: { title: Things, version: 1.0.0 }
sourceDescriptions:
  - { name: things, url: ../things.openapi.yaml, type: openapi }
workflows:
  - workflowId: createThingFlow
    inputs:
      type: object
      required: [runId]
      properties:
        runId: { type: string }
    steps:
      - stepId: create
        description: Create a thing.
        operationId: createThing
        requestBody:
          contentType: application/json
          payload:
            name: thing-{$inputs.runId}
        successCriteria:
          - condition: $statusCode == 201
          - condition: $response.body#/name == $request.body#/name
        outputs:
          id: $response.body#/id
`;

let repo: string;

const git = (...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', '-c', 'init.defaultBranch=main', ...args], { cwd: repo, encoding: 'utf8' });

function write(file: string, text: string): void {
  mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
  writeFileSync(path.join(repo, file), text);
}
const edit = (file: string, from: string, to: string): void => {
  const text = readFileSync(path.join(repo, file), 'utf8');
  expect(text, `${file} contains ${from}`).toContain(from);
  write(file, text.replace(from, to));
};

/** `npm run spec:diff` on the scratch repository, as its own process: standard output, then standard error. */
function specDiffProcess(...args: string[]): { code: number; out: string } {
  const r = spawnSync(process.execPath, [...childEntry('scripts/spec-diff.ts'), '--repo', repo, ...args], { encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off' } });
  return { code: r.status ?? 1, out: `${r.stdout}\n${r.stderr}` };
}

/** The same command in this process, its output put together as specDiffProcess() does. */
async function specDiff(...args: string[]): Promise<{ code: number; out: string }> {
  let stdout = '';
  let stderr = '';
  const code = await specDiffCli(['--repo', repo, ...args], { out: (line) => (stdout += `${line}\n`), err: (line) => (stderr += `${line}\n`) });
  return { code, out: `${stdout}\n${stderr}` };
}

beforeEach(() => {
  repo = mkdtempSync(path.join(tmpdir(), 'spec-diff-test-'));
  git('init', '-q');
  write('spec/things.openapi.yaml', OPENAPI);
  write('spec/events.asyncapi.yaml', ASYNCAPI);
  write('spec/common/schemas.yaml', SCHEMAS);
  write('spec/workflows/things.arazzo.yaml', WORKFLOW);
  git('add', '.');
  git('commit', '-q', '-m', 'contract v1');
  git('checkout', '-q', '-b', 'feature');
});
afterEach(() => rmSync(repo, { recursive: true, force: true }));

describe('spec:diff', () => {
  it('fails on breaking changes, named per operation and message, and prints entries to accept them', () => {
    // A response field removed, a request field required, an event field removed.
    edit('spec/common/schemas.yaml', "  required: [id, name]\n  properties:\n    id: { type: string }\n    name: { type: string }\n", '  required: [id]\n  properties:\n    id: { type: string }\n');
    edit('spec/common/schemas.yaml', '  required: [id, thingName]\n  properties:\n    id: { type: string }\n    thingName: { type: string }\n', '  required: [id]\n  properties:\n    id: { type: string }\n');
    const { code, out } = specDiffProcess();
    expect(code, out).toBe(1);
    expect(out).toContain('against main (the default)');
    expect(out).toMatch(/things\n {2}POST \/things\n(.*\n)* {4}✖ .*name.*\(\/responses\/201\/content\/application~1json\/schema\/properties\/name\)/);
    expect(out).toMatch(/events\n {2}message thingCreated\n(.*\n)* {4}✖ .*thingName.*\(\/payload\/properties\/thingName\)/);
    expect(out).toContain('spec:diff failed');
    expect(out).toMatch(/accepted:\n {2}- api: things\n {4}where: POST \/things\n/);
  }, 120_000);

  it('passes a breaking change accepted in spec/breaking-changes.yaml, with its reason', async () => {
    edit('spec/common/schemas.yaml', '  required: [id, thingName]\n  properties:\n    id: { type: string }\n    thingName: { type: string }\n', '  required: [id]\n  properties:\n    id: { type: string }\n');
    write(
      'spec/breaking-changes.yaml',
      'accepted:\n  - api: events\n    where: message thingCreated\n    pointer: /payload/**\n    reason: thingName moved to the thing itself; announced to receivers.\n',
    );
    const { code, out } = await specDiff();
    expect(code, out).toBe(0);
    expect(out).toMatch(/✔ .*thingName/);
    expect(out).toContain('accepted: thingName moved to the thing itself');
    expect(out).toMatch(/breaking \(\d+ accepted, 0 not\)/);
  }, 120_000);

  it('passes compatible changes: an optional response field, a new operation, a new event field', async () => {
    edit('spec/common/schemas.yaml', "    name: { type: string }\n  additionalProperties: false\nThingCreatedEvent", "    name: { type: string }\n    colour: { type: string }\n  additionalProperties: false\nThingCreatedEvent");
    edit('spec/common/schemas.yaml', '    thingName: { type: string }\n', '    thingName: { type: string }\n    colour: { type: string }\n');
    write(
      'spec/things.openapi.yaml',
      `${OPENAPI}  /things/{id}:\n    get:\n      operationId: getThing\n      summary: Read a thing\n      parameters:\n        - { name: id, in: path, required: true, schema: { type: string } }\n      responses:\n        '200':\n          description: The thing\n          content:\n            application/json:\n              schema: { $ref: './common/schemas.yaml#/Thing' }\n`,
    );
    git('commit', '-q', '-am', 'compatible additions');
    // Committed on the branch, and compared with main explicitly.
    const { code, out } = await specDiff('--base', 'main', '--all');
    expect(code, out).toBe(0);
    expect(out).toMatch(/0 breaking/);
    expect(out).toMatch(/GET \/things\/\{id\}/);
    expect(out).toMatch(/colour/);
  }, 120_000);

  it('on main itself compares with the first parent, and refuses an unknown ref', async () => {
    git('checkout', '-q', 'main');
    edit('spec/common/schemas.yaml', '  required: [name]\n', '  required: [name, size]\n');
    edit('spec/common/schemas.yaml', '    name: { type: string }\n  additionalProperties: false\nThing:', '    name: { type: string }\n    size: { type: integer }\n  additionalProperties: false\nThing:');
    git('commit', '-q', '-am', 'size required');
    const onMain = await specDiff();
    expect(onMain.code, onMain.out).toBe(1);
    expect(onMain.out).toContain('against HEAD^1');
    expect(onMain.out).toMatch(/✖ .*size/);
    const unknown = await specDiff('--base', 'no-such-ref');
    expect(unknown.code).toBe(2);
    expect(unknown.out).toContain('unknown git ref "no-such-ref"');
  }, 120_000);

  it('reports a change to a workflow as it reports one to an operation: per workflow, breaking when it asks more, acceptable', async () => {
    edit('spec/workflows/things.arazzo.yaml', '          - condition: $statusCode == 201\n', "          - condition: $statusCode == 201\n          - condition: $response.body#/id != ''\n");
    edit('spec/workflows/things.arazzo.yaml', '          - condition: $response.body#/name == $request.body#/name\n', '');
    edit('spec/workflows/things.arazzo.yaml', 'description: Create a thing.', 'description: Create one thing.');
    edit('spec/workflows/things.arazzo.yaml', '      required: [runId]\n', '      required: [runId, colour]\n');
    const { code, out } = await specDiff('--all');
    expect(code, out).toBe(1);
    expect(out).toMatch(/workflows\/things\n {2}workflow createThingFlow\n/);
    expect(out).toContain("✖ [Added] a success criterion: {\"condition\":\"$response.body#/id != ''\"} (/steps/create/successCriteria/$response.body#~1id != '')");
    expect(out).toContain('✖ [Added] a required input: colour (/inputs/required/colour)');
    expect(out).toContain('· [Removed] a success criterion: {"condition":"$response.body#/name == $request.body#/name"} (/steps/create/successCriteria/$response.body#~1name == $request.body#~1name)');
    expect(out).toContain('· [Changed] Create a thing. → Create one thing. (/steps/create/description)');
    expect(out).toMatch(/accepted:\n {2}- api: workflows\/things\n {4}where: workflow createThingFlow\n/);

    write('spec/breaking-changes.yaml', 'accepted:\n  - api: workflows/things\n    where: workflow createThingFlow\n    reason: A thing now has an id at once and a colour; announced to partners.\n');
    const accepted = await specDiff();
    expect(accepted.code, accepted.out).toBe(0);
    expect(accepted.out).toMatch(/2 breaking \(2 accepted, 0 not\)/);

    rmSync(path.join(repo, 'spec/workflows/things.arazzo.yaml'));
    rmSync(path.join(repo, 'spec/breaking-changes.yaml'));
    const removed = await specDiff();
    expect(removed.code, removed.out).toBe(1);
    expect(removed.out).toMatch(/workflow createThingFlow\n {4}✖ \[Removed\] the workflow/);
  }, 120_000);
});
