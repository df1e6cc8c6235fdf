// spec:diff's rules for a workflow: breaking when an implementation that passed may now fail it
// or when something its users refer to is gone; not breaking when it asks less or only gains.
import { describe, expect, it } from 'vitest';
import { diffArazzo } from './spec-diff-arazzo.ts';

type Json = Record<string, unknown>;

const base = (): Json => ({
  arazzo: '1.0.1',
  info: { title: 'T', version: '1.0.0' },
  sourceDescriptions: [{ name: 'orders', url: '../orders.openapi.yaml', type: 'openapi' }],
  workflows: [
    {
      workflowId: 'flow',
      summary: 'A flow.',
      inputs: { type: 'object', required: ['runId'], properties: { runId: { type: 'string' }, url: { type: 'string', default: 'https://a.example' } } },
      steps: [
        {
          stepId: 'create',
          operationId: 'createOrder',
          requestBody: { contentType: 'application/json', payload: { amountMinor: 100 } },
          successCriteria: [{ condition: '$statusCode == 201' }, { condition: "$response.body#/status == 'open'" }],
          outputs: { orderId: '$response.body#/orderId' },
        },
        { stepId: 'read', operationId: 'getOrder', successCriteria: [{ condition: '$statusCode == 200' }] },
      ],
      outputs: { orderId: '$steps.create.outputs.orderId' },
    },
  ],
});

/** The one change a mutation of the base makes: `where pointer breaking|compatible`. */
function change(mutate: (doc: Json, flow: Json, steps: Json[]) => void): string[] {
  const after = base();
  const flow = (after.workflows as Json[])[0] as Json;
  mutate(after, flow, flow.steps as Json[]);
  return diffArazzo('workflows/t', base(), after).map((c) => `${c.where} ${c.pointer} ${c.breaking ? 'breaking' : 'compatible'}`);
}

describe('diffArazzo', () => {
  it('a new success criterion or step is breaking, a removed criterion is not', () => {
    expect(change((_d, _f, s) => (s[0]!.successCriteria as Json[]).push({ condition: '$response.body#/currency == \'USD\'' }))).toEqual([
      "workflow flow /steps/create/successCriteria/$response.body#~1currency == 'USD' breaking",
    ]);
    expect(change((_d, _f, s) => (s[0]!.successCriteria as Json[]).pop())).toEqual(["workflow flow /steps/create/successCriteria/$response.body#~1status == 'open' compatible"]);
    expect(change((_d, _f, s) => s.push({ stepId: 'cancel', operationId: 'cancelSandboxOrder' }))).toEqual(['workflow flow /steps/cancel breaking']);
    expect(change((_d, _f, s) => s.pop())).toEqual(['workflow flow /steps/read breaking']);
  });

  it('steps are matched by stepId; the same steps in another order are a breaking change of /steps', () => {
    expect(change((_d, f) => (f.steps = [...(f.steps as Json[])].reverse()))).toEqual(['workflow flow /steps breaking']);
    const reordered = base();
    const flow = (reordered.workflows as Json[])[0] as Json;
    flow.steps = [...(flow.steps as Json[])].reverse();
    expect(diffArazzo('workflows/t', base(), reordered).map((c) => c.description)).toEqual(['[Changed] create, read → read, create']);
  });

  it('a changed request or operation is breaking; summaries and descriptions are not', () => {
    expect(change((_d, _f, s) => ((s[0]!.requestBody as Json).payload = { amountMinor: 200 }))).toEqual(['workflow flow /steps/create/requestBody/payload/amountMinor breaking']);
    expect(change((_d, _f, s) => (s[1]!.operationId = 'listOrderPayments'))).toEqual(['workflow flow /steps/read/operationId breaking']);
    expect(change((_d, f) => (f.summary = 'The flow.'))).toEqual(['workflow flow /summary compatible']);
    expect(change((_d, _f, s) => (s[1]!.description = 'Read it back.'))).toEqual(['workflow flow /steps/read/description compatible']);
  });

  it('outputs may be added, not removed; a required input may not be added, an optional one may', () => {
    expect(change((_d, f) => ((f.outputs as Json).orderNumber = '$steps.create.outputs.orderNumber'))).toEqual(['workflow flow /outputs/orderNumber compatible']);
    expect(change((_d, f) => delete (f.outputs as Json).orderId)).toEqual(['workflow flow /outputs/orderId breaking']);
    expect(change((_d, _f, s) => delete (s[0]!.outputs as Json).orderId)).toEqual(['workflow flow /steps/create/outputs/orderId breaking']);
    expect(change((_d, f) => ((f.inputs as Json).required as string[]).push('url'))).toEqual(['workflow flow /inputs/required/url breaking']);
    expect(change((_d, f) => ((f.inputs as Json).required = []))).toEqual(['workflow flow /inputs/required/runId compatible']);
    expect(change((_d, f) => (((f.inputs as Json).properties as Json).note = { type: 'string' }))).toEqual(['workflow flow /inputs/properties/note compatible']);
    expect(change((_d, f) => ((((f.inputs as Json).properties as Json).url as Json).default = 'https://b.example'))).toEqual(['workflow flow /inputs/properties/url/default compatible']);
    expect(change((_d, f) => ((((f.inputs as Json).properties as Json).runId as Json).type = 'integer'))).toEqual(['workflow flow /inputs/properties/runId/type breaking']);
  });

  it('a workflow removed is breaking, one added is not; a source description changed is breaking', () => {
    expect(change((d) => (d.workflows = []))).toEqual(['workflow flow  breaking']);
    expect(change((d) => (d.workflows as Json[]).push({ workflowId: 'other', steps: [] }))).toEqual(['workflow other  compatible']);
    expect(change((d) => ((d.sourceDescriptions as Json[])[0]!.url = '../orders-v3.openapi.yaml'))).toEqual(['document /sourceDescriptions/orders/url breaking']);
    expect(diffArazzo('workflows/t', base(), undefined).map((c) => `${c.where} ${c.description} ${c.breaking}`)).toEqual(['workflow flow [Removed] the workflow true']);
    expect(diffArazzo('workflows/t', undefined, base()).map((c) => `${c.where} ${c.description} ${c.breaking}`)).toEqual(['workflow flow [Added] a new workflow false']);
  });
});
