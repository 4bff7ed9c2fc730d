// The relay's HTTP endpoints, for the kubelet's probes and Prometheus:
// - /healthz (liveness): the process is alive and its event loop responsive. It does not depend on the
//   API server or the bus, so an outage of either never gets healthy relays restarted.
// - /readyz (readiness): every informer completed its first list; leader and standby are both ready
//   (a standby must be warm, and it serves /metrics).
// - /metrics: the Prometheus text exposition of the relay's registry (relay/metrics.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Millis } from '../shared/domain/types.js';
import type { RelayMetrics } from './metrics.js';
import type { Relay } from './relay.js';

export interface RelayHttpServerOptions {
  readonly relay: Pick<Relay, 'synced' | 'isLeader' | 'status'>;
  readonly metrics: RelayMetrics;
  /** 0 picks a free port. */
  readonly port: number;
  /**
   * The address to listen on: loopback by default. In a pod, the kubelet's probes and Prometheus come
   * from outside it, so the Deployment sets NLC_RELAY_HOST=0.0.0.0 (relay/settings.ts).
   */
  readonly host?: string;
  /** /healthz fails when the event loop has not run a 1 s timer for this long (10 s). */
  readonly maxEventLoopStallMs?: Millis;
}

export interface RelayHttpServer {
  /** http://HOST:PORT */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  res.end(body);
}

/**
 * Serves /healthz, /readyz and /metrics.
 *
 * @example
 * const http = await startRelayHttpServer({ relay, metrics: relay.metrics, port: 8080 });
 * // curl http://127.0.0.1:8080/readyz
 * await http.close();
 */
export async function startRelayHttpServer(options: RelayHttpServerOptions): Promise<RelayHttpServer> {
  const { relay, metrics } = options;
  const maxStall = options.maxEventLoopStallMs ?? 10_000;
  // The heartbeat the liveness check reads: a timer the event loop must keep running.
  let lastBeat = performance.now();
  const heartbeat = setInterval(() => {
    lastBeat = performance.now();
  }, 1_000);
  heartbeat.unref();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://relay').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'method not allowed\n');
      return;
    }
    switch (path) {
      case '/healthz': {
        const stalled = performance.now() - lastBeat;
        if (stalled > maxStall + 1_000) send(res, 503, `event loop stalled for ${Math.round(stalled)} ms\n`);
        else send(res, 200, 'ok\n');
        return;
      }
      case '/readyz': {
        const status = relay.status();
        const body = `${JSON.stringify({
          ready: status.synced,
          leader: status.leader,
          informers: status.informers.map((i) => ({
            resource: i.resource,
            synced: i.synced,
            objects: i.objects,
          })),
        })}\n`;
        send(res, status.synced ? 200 : 503, body, 'application/json');
        return;
      }
      case '/metrics':
        send(res, 200, await metrics.registry.metrics(), metrics.registry.contentType);
        return;
      default:
        send(res, 404, 'not found\n');
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, `${error instanceof Error ? error.message : String(error)}\n`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(heartbeat);
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
