import pg from 'pg';
import { appendFileSync } from 'node:fs';
const orig = pg.Client.prototype.query;
pg.Client.prototype.query = function (q, ...a) {
  const text = typeof q === 'string' ? q : q?.text;
  if (text) appendFileSync('/tmp/pg.log', `${this.processID} ${text.replace(/\s+/g, ' ').slice(0, 160)}\n`);
  return orig.call(this, q, ...a);
};
