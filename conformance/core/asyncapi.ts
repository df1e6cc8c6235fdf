// The webhook contract at run time: every message of every channel of the resolved AsyncAPI
// document (generated/asyncapi/webhooks.json), with its schemas, its documented examples and
// a spec pointer for reports. Checks are derived from this walk, so a message added to the
// spec is replayed without hand edits.
import { readFileSync } from 'node:fs';
import { ASYNCAPI_DOCUMENT } from './documents.ts';

export type JsonSchema = Record<string, unknown>;

/** The spec file the pointers refer to (relative to spec/). */
export const ASYNCAPI_FILE = 'webhooks.asyncapi.yaml';

export interface MessageExample {
  name: string;
  summary: string | undefined;
  /** Header values as documented (names as written in the spec). */
  headers: Record<string, string>;
  payload: unknown;
  /** `webhooks.asyncapi.yaml#/components/messages/orderPaid/examples/0` */
  pointer: string;
}

export interface MessageSpec {
  channelId: string;
  /** Key of the message in its channel. */
  key: string;
  /** The message's `name`: the event type (`order.paid`, `payout.completed`, ...). */
  name: string;
  title: string;
  /** `webhooks.asyncapi.yaml#/components/messages/orderPaid` (or the channel's pointer). */
  pointer: string;
  payloadSchema: JsonSchema;
  headersSchema: JsonSchema;
  examples: MessageExample[];
  /**
   * Whether the body carries the event id (`id`, required by the payload schema); then the
   * `Service-Event-Id` header must equal it. The payout-completed callback body has none.
   */
  bodyCarriesEventId: boolean;
}

export interface ChannelSpec {
  id: string;
  title: string;
  /** Names of the servers (in `servers`) this channel is served by, e.g. `merchant`, `notifyUrl`. */
  serverNames: string[];
  /** The operation that sends on this channel, e.g. `sendOrderWebhook`. */
  operationId: string | undefined;
  messages: MessageSpec[];
}


type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function loadAsyncApiDocument(file = ASYNCAPI_DOCUMENT): Obj {
  return JSON.parse(readFileSync(file, 'utf8')) as Obj;
}

/** Every channel with every message, in document order. */
export function webhookChannels(doc: Obj = loadAsyncApiDocument()): ChannelSpec[] {
  const components = obj(obj(doc.components).messages);
  const servers = obj(doc.servers);
  const operations = obj(doc.operations);
  const channels: ChannelSpec[] = [];
  for (const [channelId, rawChannel] of Object.entries(obj(doc.channels))) {
    const channel = obj(rawChannel);
    // The document is dereferenced: a channel's servers are copies of the `servers` entries.
    const serverNames = (Array.isArray(channel.servers) ? channel.servers : []).flatMap((s) => {
      const text = JSON.stringify(s);
      return Object.entries(servers)
        .filter(([, server]) => JSON.stringify(server) === text)
        .map(([name]) => name);
    });
    const operationId = Object.entries(operations).find(([, op]) => JSON.stringify(obj(op).channel) === JSON.stringify(rawChannel))?.[0];
    const messages: MessageSpec[] = [];
    for (const [key, rawMessage] of Object.entries(obj(channel.messages))) {
      const message = obj(rawMessage);
      const name = str(message.name) ?? key;
      const componentId = Object.entries(components).find(([, m]) => str(obj(m).name) === name)?.[0];
      const pointer = componentId
        ? `${ASYNCAPI_FILE}#/components/messages/${componentId}`
        : `${ASYNCAPI_FILE}#/channels/${channelId}/messages/${key}`;
      const payloadSchema = obj(message.payload);
      const required = Array.isArray(payloadSchema.required) ? payloadSchema.required : [];
      const examples = (Array.isArray(message.examples) ? message.examples : []).map((rawExample, index): MessageExample => {
        const example = obj(rawExample);
        const headers: Record<string, string> = {};
        for (const [h, v] of Object.entries(obj(example.headers))) if (typeof v === 'string') headers[h] = v;
        return {
          name: str(example.name) ?? `example${index + 1}`,
          summary: str(example.summary),
          headers,
          payload: example.payload,
          pointer: `${pointer}/examples/${index}`,
        };
      });
      messages.push({
        channelId,
        key,
        name,
        title: str(message.title) ?? name,
        pointer,
        payloadSchema,
        headersSchema: obj(message.headers),
        examples,
        bodyCarriesEventId: required.includes('id') && isObj(obj(payloadSchema.properties).id),
      });
    }
    channels.push({ id: channelId, title: str(channel.title) ?? channelId, serverNames, operationId, messages });
  }
  return channels;
}

/** A header's value in a documented example, found case-insensitively. */
export function exampleHeader(example: MessageExample, name: string): string | undefined {
  const wanted = name.toLowerCase();
  return Object.entries(example.headers).find(([k]) => k.toLowerCase() === wanted)?.[1];
}
