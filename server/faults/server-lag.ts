// The longest event-loop stall of a server in its own process, read from its /metrics as an
// operator's scraper would (prom-client's default nodejs_eventloop_lag_max_seconds, whose
// maximum is reset on each scrape): a fault test's bound on when an answer may come adds the
// stalls of the process that answers, not only those of the process that measures.
import { fetchOnNewConnection } from './one-shot-fetch.ts';

/**
 * The server's longest stall since its previous scrape, in whole ms. The scrape waits up to
 * `deadlineMs` for the answer: a server in the middle of a stall answers after it.
 */
export async function serverLagMs(url: string, metricsToken: string, deadlineMs = 10_000): Promise<number> {
  const r = await fetchOnNewConnection(`${url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` }, signal: AbortSignal.timeout(deadlineMs) });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${url}/metrics answered ${r.status}: ${text.slice(0, 200)}`);
  const m = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text);
  if (!m) throw new Error(`${url}/metrics has no nodejs_eventloop_lag_max_seconds`);
  return Math.ceil(Number(m[1]) * 1000);
}
