// An Answer (src/gateway/envelope.ts) that records what it transmits: the envelope's own code
// (canWrite, stamps, form A bodies) without a transport, for unit tests of the answer paths.
import { Answer, bodyText, type Header } from '../../src/gateway/envelope.js';

export class RecordingAnswer extends Answer {
  readonly sent_replies: { status: number; body: string }[] = [];
  gone = false;

  constructor(id = 'test-1') {
    super(id);
  }

  get aborted(): boolean {
    return this.gone;
  }

  protected transmit(http_status: number, body: string | Uint8Array, _headers: readonly Header[] | undefined): void {
    this.sent_replies.push({ status: http_status, body: bodyText(body) });
  }
}
