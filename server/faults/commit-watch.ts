// Which client message makes a connection's work durable: a simple query that ends in COMMIT,
// or, outside a transaction block, the Sync after an Execute of a data-modifying statement
// (a batch of orders alone is one INSERT ... json_populate_recordset in an implicit
// transaction, committed at Sync). The fault proxy cuts the connection after such a message
// reaches the server and before its answer reaches the client: the outcome is unknown.
import { asksForEncryption, cString, FrameReader, type Frame } from './pg-wire.ts';

const SIMPLE_COMMIT = /(^|;)\s*(COMMIT|END)(\s+(WORK|TRANSACTION))?\s*;?\s*$/i;
const WRITES = /^\s*(WITH\b[\s\S]*\b(INSERT|UPDATE|DELETE)\b|INSERT\b|UPDATE\b|DELETE\b|MERGE\b)/i;

export class CommitWatch {
  private readonly client = new FrameReader('client');
  private readonly server = new FrameReader('server');
  private readonly statements = new Map<string, string>();
  private readonly portals = new Map<string, string>();
  /** The transaction status of the last ReadyForQuery: I idle, T in a block, E failed block. */
  private status = 'I';
  private writeExecuted = false;

  /** Reads client bytes; calls onCommit once for each message that commits. */
  fromClient(chunk: Buffer, onCommit: () => void): void {
    this.client.push(chunk, (f) => {
      if (this.commits(f)) onCommit();
    });
  }

  fromServer(chunk: Buffer): void {
    this.server.push(chunk, (f) => {
      if (f.type === 'Z' && f.body.length > 0) this.status = String.fromCharCode(f.body[0] ?? 73);
    });
  }

  private commits(f: Frame): boolean {
    switch (f.type) {
      case '':
        if (asksForEncryption(f)) this.server.expectSingleByte();
        return false;
      case 'Q':
        return SIMPLE_COMMIT.test(cString(f.body, 0)[0]);
      case 'P': {
        const [name, at] = cString(f.body, 0);
        this.statements.set(name, cString(f.body, at)[0]);
        return false;
      }
      case 'B': {
        const [portal, at] = cString(f.body, 0);
        this.portals.set(portal, this.statements.get(cString(f.body, at)[0]) ?? '');
        return false;
      }
      case 'E':
        if (this.status === 'I' && WRITES.test(this.portals.get(cString(f.body, 0)[0]) ?? '')) this.writeExecuted = true;
        return false;
      case 'S': {
        const commits = this.writeExecuted;
        this.writeExecuted = false;
        return commits;
      }
      default:
        return false;
    }
  }
}
