// Just enough of PostgreSQL's wire protocol for the fault proxy to see which message commits:
// frames split out of a byte stream that TCP cuts anywhere, and the statements they carry.
// Client side: the untyped start-up (SSLRequest, GSSENCRequest, StartupMessage), then
// typed messages (a type byte, an int32 length that counts itself, the body). Server side:
// one byte answering an SSL/GSS request, then typed messages.

export interface Frame {
  /** The type byte as a character; '' for an untyped start-up message. */
  type: string;
  body: Buffer;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Splits a stream into frames as bytes arrive. */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);
  /** Untyped start-up messages still to come (client side) or single-byte answers (server side). */
  private untyped: number;
  private singleBytes = 0;

  constructor(private readonly side: 'client' | 'server') {
    this.untyped = side === 'client' ? 1 : 0;
  }

  /** The server answers an SSL or GSS request with one byte before anything else. */
  expectSingleByte(): void {
    this.singleBytes++;
  }

  push(chunk: Buffer, onFrame: (f: Frame) => void): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    for (;;) {
      if (this.singleBytes > 0 && this.buf.length >= 1) {
        this.singleBytes--;
        onFrame({ type: String.fromCharCode(this.buf[0] ?? 0), body: Buffer.alloc(0) });
        this.buf = this.buf.subarray(1);
        continue;
      }
      const typed = this.untyped === 0;
      const head = typed ? 5 : 4;
      if (this.buf.length < head) return;
      const len = this.buf.readInt32BE(typed ? 1 : 0);
      const total = (typed ? 1 : 0) + len;
      if (this.buf.length < total) return;
      const type = typed ? String.fromCharCode(this.buf[0] ?? 0) : '';
      const body = this.buf.subarray(head, total);
      this.buf = this.buf.subarray(total);
      if (typed) onFrame({ type, body });
      else this.startup(body, onFrame);
    }
  }

  private startup(body: Buffer, onFrame: (f: Frame) => void): void {
    const code = body.length >= 4 ? body.readInt32BE(0) : 0;
    // An SSL/GSS request is followed by another untyped message (the StartupMessage).
    if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.untyped--;
    onFrame({ type: '', body });
  }
}

/** The start-up message's request code (SSLRequest, GSSENCRequest) when it asks for encryption. */
export function asksForEncryption(f: Frame): boolean {
  if (f.type !== '' || f.body.length < 4) return false;
  const code = f.body.readInt32BE(0);
  return code === SSL_REQUEST || code === GSSENC_REQUEST;
}

/** A C string at `offset`, and the offset after its terminator. */
export function cString(body: Buffer, offset: number): [string, number] {
  const end = body.indexOf(0, offset);
  const stop = end < 0 ? body.length : end;
  return [body.toString('utf8', offset, stop), stop + 1];
}
