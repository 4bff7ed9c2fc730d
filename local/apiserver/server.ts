// The HTTP face of the simulator: node:http on loopback, speaking the Kubernetes REST API as
// client-node and kubectl expect it. Routing (/api/v1/..., /apis/<group>/<version>/..., namespaced and
// cluster-scoped paths, subresources), bearer-token authentication, RBAC-style rules, fault injection,
// watch streams (chunked newline-delimited JSON, bookmarks, timeouts, 410 as an ERROR event) and
// discovery. The semantics live in registry.ts; this file only translates: it authenticates,
// authorizes, injects faults and logs each request, and hands the rest to routing.ts, verbs.ts and
// watchStream.ts.
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { createServer as createSecureServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { type Identity, authenticate, authorize } from './auth.js';
import { type VersionInfo, versionDocument } from './discovery.js';
import { type FaultRule, Faults, type RequestInfo } from './faults.js';
import { CollectedResponse, type InProcessRequest, type InProcessResponse } from './inProcess.js';
import type { Registry } from './registry.js';
import { boolParam, readBody } from './requestParams.js';
import type { Verb } from './resources.js';
import { sendError, sendJson } from './responses.js';
import { type ResourceTarget, route, verbFor } from './routing.js';
import {
  type ApiStatusError,
  badRequest,
  conflict,
  forbidden,
  internalError,
  methodNotAllowed,
  pathNotFound,
  tooManyRequests,
  unauthorized,
} from './status.js';
import { tableFor, wantsTable } from './table.js';
import type { ServingCertificate } from './tls.js';
import { serveVerb } from './verbs.js';
import { serveWatch } from './watchStream.js';

export interface ServerOptions {
  readonly registry: Registry;
  readonly identities: readonly Identity[];
  readonly faults: Faults;
  readonly version: VersionInfo;
  /** Watches without timeoutSeconds end after this long (kube-apiserver --min-request-timeout, 1800 s). */
  readonly defaultWatchTimeoutSeconds: number;
  /** How often watches that allow bookmarks get one (about a minute upstream). */
  readonly bookmarkIntervalMs: number;
  /** Wall-clock "now" for Table ages; the registry's clock. */
  readonly now: () => number;
  /** Serve https with this certificate; plain http when absent. */
  readonly tls?: ServingCertificate;
}

/** One served request, for tests that count calls. */
export interface RequestRecord {
  readonly method: string;
  readonly path: string;
  readonly verb?: Verb;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly user?: string;
  readonly code: number;
}

const maxRequestRecords = 10_000;

export class ApiHttpServer {
  readonly server: ReturnType<typeof createServer> | ReturnType<typeof createSecureServer>;
  readonly requests: RequestRecord[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly openWatches = new Set<() => void>();
  private readonly bookmarkTimer: NodeJS.Timeout;
  private address = '127.0.0.1:0';

  constructor(private readonly options: ServerOptions) {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((error: unknown) => {
        sendError(res, error);
      });
    };
    this.server =
      options.tls === undefined
        ? createServer(handler)
        : createSecureServer({ cert: options.tls.cert, key: options.tls.key }, handler);
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.bookmarkTimer = setInterval(() => {
      options.registry.sendBookmarks();
    }, options.bookmarkIntervalMs);
    this.bookmarkTimer.unref();
  }

  async listen(port: number, host: string): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const address = this.server.address() as AddressInfo;
    this.address = `${address.address}:${address.port}`;
    return address;
  }

  async close(): Promise<void> {
    clearInterval(this.bookmarkTimer);
    for (const stop of [...this.openWatches]) stop();
    await new Promise<void>((resolve) => {
      this.server.close(() => {
        resolve();
      });
      for (const socket of this.sockets) socket.destroy();
    });
  }

  /**
   * Serves one request in process, exactly as over HTTP (authentication, routing, RBAC rules, faults,
   * admission, the request log) but without a socket, so a client's call completes within the awaited
   * call: `nlc simulate` runs client-node through it on virtual time. Watches are refused (400): an
   * in-process watcher uses the registry's watch.
   *
   * @example
   * const res = await server.dispatch({ method: 'GET', url: '/api/v1/nodes', headers: { authorization: `Bearer ${token}` } });
   */
  async dispatch(request: InProcessRequest): Promise<InProcessResponse> {
    const url = new URL(request.url, 'http://localhost');
    if (request.method === 'GET' && boolParam(url.searchParams.get('watch'))) {
      return {
        status: 400,
        headers: {},
        body: JSON.stringify(badRequest('watch is not served in process').status),
      };
    }
    // A real stream for the body, so readBody reads it as it reads a socket's.
    const req = Object.assign(Readable.from(request.body === undefined ? [] : [Buffer.from(request.body)]), {
      url: request.url,
      method: request.method,
      headers: request.headers,
    });
    const res = new CollectedResponse();
    // handle() touches only what CollectedResponse and the stream above provide on this path.
    const asRequest = req as unknown as IncomingMessage;
    const asResponse = res as unknown as ServerResponse;
    await this.handle(asRequest, asResponse).catch((error: unknown) => {
      sendError(asResponse, error);
    });
    return { status: res.status, headers: res.headers, body: res.body() };
  }

  private record(record: RequestRecord): void {
    this.requests.push(record);
    // Cut back to the newest maxRequestRecords once twice that many are kept: one cut per
    // maxRequestRecords requests, where a cut per request moved the whole log each time (50 µs).
    if (this.requests.length >= 2 * maxRequestRecords)
      this.requests.splice(0, this.requests.length - maxRequestRecords);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const segments = url.pathname
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
    const base = { method, path: url.pathname };

    // Paths any client may read, as system:public-info-viewer allows on a real server.
    if (
      method === 'GET' &&
      segments.length === 1 &&
      ['version', 'healthz', 'livez', 'readyz'].includes(segments[0] ?? '')
    ) {
      if (segments[0] === 'version') sendJson(res, 200, versionDocument(this.options.version));
      else {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('ok');
      }
      this.record({ ...base, code: 200 });
      return;
    }

    const identity = authenticate(this.options.identities, req.headers.authorization);
    if (identity === undefined) {
      this.record({ ...base, code: sendError(res, unauthorized()) });
      return;
    }

    const routed = route(segments, this.address);
    if (routed.kind === 'notFound') {
      this.record({ ...base, user: identity.name, code: sendError(res, pathNotFound()) });
      return;
    }
    if (routed.kind === 'document') {
      if (method !== 'GET') {
        this.record({ ...base, user: identity.name, code: sendError(res, methodNotAllowed()) });
        return;
      }
      sendJson(res, 200, routed.body);
      this.record({ ...base, user: identity.name, code: 200 });
      return;
    }

    const { target } = routed;
    const { def } = target;
    const watch = boolParam(url.searchParams.get('watch'));
    const verb = verbFor(method, target, watch);
    const info: RequestInfo = {
      verb: verb ?? 'get',
      resource: def.resource,
      subresource: target.subresource,
      namespace: target.namespace,
      name: target.name,
      user: identity.name,
    };
    const recordBase = { ...base, ...info };
    if (verb === undefined) {
      this.record({ ...recordBase, code: sendError(res, methodNotAllowed()) });
      return;
    }
    const why = authorize(identity, {
      verb,
      apiGroup: def.group,
      resource: def.resource,
      ...(target.subresource !== '' && { subresource: target.subresource }),
      namespace: target.namespace,
      name: target.name,
    });
    if (why !== undefined) {
      const error = forbidden({ group: def.group, resource: def.resource }, target.name, why);
      this.record({ ...recordBase, code: sendError(res, error) });
      return;
    }

    const faults = this.options.faults.take(info);
    for (const fault of faults) {
      if (fault.kind === 'delay') await this.options.faults.hold(fault);
    }
    const failure = faults.find(
      (f) => f.kind === 'conflict' || f.kind === 'tooManyRequests' || f.kind === 'internalError',
    );
    if (failure !== undefined) {
      this.record({ ...recordBase, code: sendError(res, this.faultError(failure, target)) });
      return;
    }

    if (verb === 'watch') {
      const drop = faults.find((f): f is Extract<FaultRule, { kind: 'dropWatch' }> => f.kind === 'dropWatch');
      const code = serveWatch(
        {
          registry: this.options.registry,
          faults: this.options.faults,
          defaultWatchTimeoutSeconds: this.options.defaultWatchTimeoutSeconds,
          openWatches: this.openWatches,
        },
        req,
        res,
        target,
        url.searchParams,
        info,
        drop,
      );
      this.record({ ...recordBase, code });
      return;
    }

    try {
      const text = method === 'GET' ? '' : await readBody(req);
      const { code, body } = serveVerb(
        this.options.registry,
        req,
        method,
        verb,
        target,
        url.searchParams,
        text,
      );
      if ((verb === 'list' || verb === 'get') && wantsTable(req.headers.accept)) {
        sendJson(res, code, tableFor(def, body, this.options.now()));
      } else {
        sendJson(res, code, body);
      }
      this.record({ ...recordBase, code });
    } catch (error) {
      this.record({ ...recordBase, code: sendError(res, error) });
    }
  }

  private faultError(fault: FaultRule, target: ResourceTarget): ApiStatusError {
    const gr = { group: target.def.group, resource: target.def.resource };
    switch (fault.kind) {
      case 'conflict':
        return conflict(gr, target.name);
      case 'tooManyRequests':
        return tooManyRequests(fault.retryAfterSeconds ?? 1);
      default:
        return internalError(
          fault.kind === 'internalError' ? (fault.message ?? 'injected fault') : 'injected fault',
        );
    }
  }
}
