// Mutant: skips verification altogether and answers 2xx to every request.
import { listen, reply } from './serve.ts';
import type { MutantOptions, RunningReceiver } from './serve.ts';

export function startAcceptsEverything(_opts: MutantOptions): Promise<RunningReceiver> {
  return listen((_req, _rawBody, res) => reply(res, 200, { received: true }));
}
