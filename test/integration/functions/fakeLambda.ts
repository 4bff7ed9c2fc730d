// A stand-in for the Lambda Invoke API on 127.0.0.1 (what serverless-offline's lambda port serves
// locally): records every invoke and answers as configured, so the drainer trigger is tested through
// the real @aws-sdk/client-lambda.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedInvoke {
  readonly functionName: string;
  readonly invocationType: string | undefined;
  readonly payload: unknown;
}

export interface FakeLambda {
  readonly endpoint: string;
  readonly invokes: RecordedInvoke[];
  /** The next answers: 202 by default; an error status carries `x-amzn-ErrorType: errorType`. */
  answer(status: number, errorType?: string): void;
  close(): Promise<void>;
}

export async function startFakeLambda(): Promise<FakeLambda> {
  const invokes: RecordedInvoke[] = [];
  let reply = { status: 202, errorType: undefined as string | undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations/.exec(req.url ?? '');
      const text = Buffer.concat(chunks).toString('utf8');
      invokes.push({
        functionName: decodeURIComponent(match?.[1] ?? ''),
        invocationType: req.headers['x-amz-invocation-type'] as string | undefined,
        payload: text === '' ? undefined : (JSON.parse(text) as unknown),
      });
      res.statusCode = reply.status;
      if (reply.errorType !== undefined) {
        res.setHeader('x-amzn-ErrorType', reply.errorType);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ Type: 'User', message: `${reply.errorType}: no such function` }));
        return;
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    invokes,
    answer: (status, errorType) => {
      reply = { status, errorType };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => {
          if (error) reject(error);
          else resolve();
        });
      }),
  };
}
