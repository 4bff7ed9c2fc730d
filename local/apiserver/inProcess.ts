// Requests served in process (ApiHttpServer.dispatch): what an HTTP request and response carry,
// without a socket, so `nlc simulate` runs client-node through the server on virtual time.
/** A request served in process (`dispatch`): what an HTTP request carries, without a socket. */
export interface InProcessRequest {
  readonly method: string;
  /** Path and query, e.g. `/api/v1/nodes/node-a?fieldSelector=...`. */
  readonly url: string;
  /** Header names in lower case, as node:http gives them. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface InProcessResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The part of node:http's ServerResponse `handle` uses for a non-watch request, collected in memory.
 * Watches are not served in process (their callers use the registry's watch directly).
 */
export class CollectedResponse {
  headersSent = false;
  status = 200;
  headers: Record<string, string> = {};
  private readonly chunks: string[] = [];

  writeHead(code: number, headers: Record<string, string> = {}): this {
    this.status = code;
    this.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    this.headersSent = true;
    return this;
  }

  end(text?: string): this {
    if (text !== undefined) this.chunks.push(text);
    return this;
  }

  body(): string {
    return this.chunks.join('');
  }
}
