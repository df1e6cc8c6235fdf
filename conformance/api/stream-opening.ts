// The event stream's opening message (streamEvents#opening-position): GET /v2/events/stream first sends
// a message with only an `id`, the position it starts after. Opened without a cursor, that id
// is "now"; resumed from it (after=), the opening id is the sent cursor and the first event is
// the one recorded meanwhile (a webhook.test recorded through the sandbox), so a client that
// kept the opening id misses nothing even when no event had come yet.
import type { Check, CheckContext, Exchange } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import { fail, pass } from '../core/outcome.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { statefulRun } from './checks.ts';
import { API, STREAM_OPENING_RULE } from './rules.ts';
import type { StatefulChecksOptions } from './stateful.ts';

const STREAM_OP = 'streamEvents';
const TEST_EVENT_OP = 'createSandboxTestEvent';

interface Message {
  id?: string;
  event?: string;
  data?: string;
  /** Field names other than comments. */
  fields: string[];
}

/** The SSE messages of a stream's text (comments left out). */
export function sseMessages(text: string): Message[] {
  return text
    .split('\n\n')
    .slice(0, -1)
    .map((block) => {
      const m: Message = { fields: [] };
      for (const line of block.split('\n')) {
        if (line.startsWith(':') || line === '') continue;
        const i = line.indexOf(':');
        const [name, value] = i < 0 ? [line, ''] : [line.slice(0, i), line.slice(i + 1).replace(/^ /, '')];
        m.fields.push(name);
        if (name === 'id' || name === 'event' || name === 'data') m[name] = value;
      }
      return m;
    });
}

export function streamOpeningChecks(o: StatefulChecksOptions): Check[] {
  const s = o.state;
  if (!s.hasOp(STREAM_OP) || !s.hasOp(TEST_EVENT_OP)) return [];
  const open = async (ctx: CheckContext, evidence: Exchange[], label: string, after?: string, messages = 1) => {
    const op = s.op(STREAM_OP);
    const res = await o.client.call(op, { auth: await s.authFor(op), ...(after !== undefined ? { query: { after } } : {}), streamMessages: messages, label }, ctx.signal);
    evidence.push(res.exchange);
    return { res, messages: sseMessages(res.exchange.response.body) };
  };
  return [
    defineCheck({
      book: API,
      id: 'rules.stream.opening-position',
      title: 'GET /v2/events/stream opens with a message carrying only an id; resumed from it, it opens with that id and then the event recorded meanwhile',
      group: 'stateful rules',
      rules: [STREAM_OPENING_RULE],
      run: statefulRun(o.skipStateful, async (ctx, evidence) => {
        const first = await open(ctx, evidence, 'open the stream without a cursor');
        if (first.res.status !== 200) return fail(`the stream answered ${describeAnswer(first.res)}`, STREAM_OPENING_RULE, evidence);
        const opening = first.messages[0];
        if (opening?.id === undefined || opening.id === '' || opening.fields.some((f) => f !== 'id')) {
          return fail(`the first message carries ${opening ? `the fields ${opening.fields.join(', ') || 'none'}` : 'nothing'}: it carries only an id, the position the stream starts after`, STREAM_OPENING_RULE, evidence);
        }
        const created = await s.create(TEST_EVENT_OP, 'record a webhook.test event while no stream is open (sandbox)');
        evidence.push(created.res.exchange);
        const eventId = String(created.json.id);
        const resumed = await open(ctx, evidence, 'resume from the opening id (after=)', opening.id, 2);
        const [again, next] = resumed.messages;
        if (again?.id !== opening.id || again.fields.some((f) => f !== 'id')) {
          return fail(`resumed with after=${opening.id}, the stream opens with ${again ? `id ${JSON.stringify(again.id)} (fields ${again.fields.join(', ')})` : 'nothing'}: the opening message carries the sent cursor`, STREAM_OPENING_RULE, evidence);
        }
        const nextId = (() => {
          try {
            return (JSON.parse(next?.data ?? '') as { id?: unknown }).id;
          } catch {
            return undefined;
          }
        })();
        if (nextId !== eventId) return fail(`resumed from the opening id, the first event is ${JSON.stringify(nextId ?? next?.event ?? null)}, not the webhook.test ${eventId} recorded after that position`, STREAM_OPENING_RULE, evidence);
        return pass([`opening id ${opening.id}; resuming from it delivered ${eventId}`]);
      }),
    }),
  ];
}
