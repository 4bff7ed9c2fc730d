// The HTTP face of the simulator: node:http on loopback, speaking the Kubernetes REST API as
// client-node and kubectl expect it. Routing (/api/v1/..., /apis/<group>/<version>/..., namespaced and
// cluster-scoped paths, subresources), bearer-token authentication, RBAC-style rules, fault injection,
// watch streams (chunked newline-delimited JSON, bookmarks, timeouts, 410 as an ERROR event) and
// discovery. The semantics live in registry.ts; this file only translates.
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { createServer as createSecureServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { type Identity, authenticate, authorize } from './auth.js';
import {
  type VersionInfo,
  apiGroupDocument,
  apiGroupListDocument,
  apiResourceListDocument,
  apiVersionsDocument,
  versionDocument,
} from './discovery.js';
import { type FaultRule, Faults, type RequestInfo } from './faults.js';
import { type Json, type JsonObject, getNumber, getString, isObject, parseJson } from './json.js';
import { openApiV3Document, openApiV3Root } from './openapi.js';
import { patchContentTypes } from './patch.js';
import type { DeleteOptions, Registry, WatchEvent } from './registry.js';
import { type ResourceDef, type Verb, findResource, pods } from './resources.js';
import { tableFor, wantsTable } from './table.js';
import type { ServingCertificate } from './tls.js';
import {
  ApiStatusError,
  badRequest,
  conflict,
  forbidden,
  internalError,
  methodNotAllowed,
  pathNotFound,
  tooManyRequests,
  unauthorized,
  unsupportedMediaType,
} from './status.js';

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

/** One served request, for tests that count calls (STYLE: integration tests assert request counts). */
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
class CollectedResponse {
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

const maxRequestRecords = 10_000;
const maxBodyBytes = 3 * 1024 * 1024;

interface ResourceTarget {
  readonly def: ResourceDef;
  readonly namespace: string;
  readonly name: string;
  readonly subresource: string;
}

type Route =
  | { readonly kind: 'resource'; readonly target: ResourceTarget }
  | { readonly kind: 'document'; readonly body: JsonObject }
  | { readonly kind: 'notFound' };

function route(segments: readonly string[], serverAddress: string): Route {
  const [root, ...rest] = segments;
  let group: string;
  let version: string;
  let tail: readonly string[];
  if (root === 'api') {
    if (rest.length === 0) return { kind: 'document', body: apiVersionsDocument(serverAddress) };
    group = '';
    version = rest[0] ?? '';
    tail = rest.slice(1);
  } else if (root === 'apis') {
    if (rest.length === 0) return { kind: 'document', body: apiGroupListDocument() };
    group = rest[0] ?? '';
    if (rest.length === 1) {
      const doc = apiGroupDocument(group);
      return doc === undefined ? { kind: 'notFound' } : { kind: 'document', body: doc };
    }
    version = rest[1] ?? '';
    tail = rest.slice(2);
  } else if (root === 'openapi' && rest[0] === 'v3') {
    if (rest.length === 1) return { kind: 'document', body: openApiV3Root() };
    const doc = openApiV3Document(rest.slice(1).join('/'));
    return doc === undefined ? { kind: 'notFound' } : { kind: 'document', body: doc };
  } else {
    return { kind: 'notFound' };
  }
  const groupVersion = group === '' ? version : `${group}/${version}`;
  if (tail.length === 0) {
    const doc = apiResourceListDocument(groupVersion);
    return doc === undefined ? { kind: 'notFound' } : { kind: 'document', body: doc };
  }
  let namespace = '';
  let parts = tail;
  if (tail[0] === 'namespaces' && tail.length >= 3) {
    const def = findResource(group, version, tail[2] ?? '');
    if (def?.namespaced === true) {
      namespace = tail[1] ?? '';
      parts = tail.slice(2);
    }
  }
  const [resource = '', name = '', subresource = '', ...extra] = parts;
  const def = findResource(group, version, resource);
  if (def === undefined || extra.length > 0) return { kind: 'notFound' };
  if (subresource !== '' && !(def.subresources as readonly string[]).includes(subresource))
    return { kind: 'notFound' };
  if (def.namespaced && namespace === '' && name !== '') return { kind: 'notFound' };
  return { kind: 'resource', target: { def, namespace, name, subresource } };
}

function verbFor(method: string, target: ResourceTarget, watch: boolean): Verb | undefined {
  const hasName = target.name !== '';
  switch (method) {
    case 'GET':
      return hasName ? 'get' : watch ? 'watch' : 'list';
    case 'POST':
      if (target.subresource === 'binding') return 'create';
      return hasName ? undefined : 'create';
    case 'PUT':
      return hasName ? 'update' : undefined;
    case 'PATCH':
      return hasName ? 'patch' : undefined;
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return undefined;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        reject(new ApiStatusError({ ...badRequest('request entity too large').status, code: 413 }));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

function boolParam(value: string | null): boolean {
  return value === 'true' || value === '1';
}

function intParam(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^-?\d+$/.test(raw)) throw badRequest(`invalid value for ${name}: ${raw}`);
  return Number(raw);
}

function dryRunParam(params: URLSearchParams, body?: JsonObject): boolean {
  const values = [...params.getAll('dryRun')];
  const fromBody = body?.dryRun;
  if (Array.isArray(fromBody)) for (const v of fromBody) if (typeof v === 'string') values.push(v);
  for (const value of values) {
    if (value !== 'All')
      throw badRequest(`Invalid dry run value: ${JSON.stringify(value)}; supported values: "All"`);
  }
  return values.length > 0;
}

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
        this.sendError(res, error);
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
      this.sendError(asResponse, error);
    });
    return { status: res.status, headers: res.headers, body: res.body() };
  }

  private record(record: RequestRecord): void {
    this.requests.push(record);
    if (this.requests.length > maxRequestRecords)
      this.requests.splice(0, this.requests.length - maxRequestRecords);
  }

  private send(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.headersSent) {
      res.end();
      return;
    }
    const text = JSON.stringify(body);
    res.writeHead(code, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      ...headers,
    });
    res.end(text);
  }

  private sendError(res: ServerResponse, error: unknown): number {
    const apiError =
      error instanceof ApiStatusError
        ? error
        : internalError(error instanceof Error ? error.message : String(error));
    const headers: Record<string, string> = {};
    const retryAfter = apiError.status.details?.retryAfterSeconds;
    if (apiError.code === 429 && retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
    this.send(res, apiError.code, apiError.status, headers);
    return apiError.code;
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
      if (segments[0] === 'version') this.send(res, 200, versionDocument(this.options.version));
      else {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('ok');
      }
      this.record({ ...base, code: 200 });
      return;
    }

    const identity = authenticate(this.options.identities, req.headers.authorization);
    if (identity === undefined) {
      this.record({ ...base, code: this.sendError(res, unauthorized()) });
      return;
    }

    const routed = route(segments, this.address);
    if (routed.kind === 'notFound') {
      this.record({ ...base, user: identity.name, code: this.sendError(res, pathNotFound()) });
      return;
    }
    if (routed.kind === 'document') {
      if (method !== 'GET') {
        this.record({ ...base, user: identity.name, code: this.sendError(res, methodNotAllowed()) });
        return;
      }
      this.send(res, 200, routed.body);
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
      this.record({ ...recordBase, code: this.sendError(res, methodNotAllowed()) });
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
      this.record({ ...recordBase, code: this.sendError(res, error) });
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
      this.record({ ...recordBase, code: this.sendError(res, this.faultError(failure, target)) });
      return;
    }

    if (verb === 'watch') {
      const drop = faults.find((f): f is Extract<FaultRule, { kind: 'dropWatch' }> => f.kind === 'dropWatch');
      const code = this.serveWatch(req, res, target, url.searchParams, info, drop);
      this.record({ ...recordBase, code });
      return;
    }

    try {
      const text = method === 'GET' ? '' : await readBody(req);
      const { code, body } = this.serve(req, method, verb, target, url.searchParams, text);
      if ((verb === 'list' || verb === 'get') && wantsTable(req.headers.accept)) {
        this.send(res, code, tableFor(def, body, this.options.now()));
      } else {
        this.send(res, code, body);
      }
      this.record({ ...recordBase, code });
    } catch (error) {
      this.record({ ...recordBase, code: this.sendError(res, error) });
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

  private parseBody(text: string, def: ResourceDef): Json {
    if (text.trim() === '')
      throw badRequest(
        `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: empty body`,
      );
    const body = parseJson(text);
    if (body === undefined) {
      throw badRequest(
        `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: json parse error: invalid character`,
      );
    }
    return body;
  }

  private serve(
    req: IncomingMessage,
    method: string,
    verb: Verb,
    target: ResourceTarget,
    params: URLSearchParams,
    text: string,
  ): { code: number; body: unknown } {
    const { registry } = this.options;
    const { def, namespace, name } = target;
    const subresource = target.subresource === 'status' ? 'status' : undefined;
    switch (verb) {
      case 'get':
        return { code: 200, body: registry.get(def, namespace, name) };
      case 'list':
        return {
          code: 200,
          body: registry.list(def, {
            namespace,
            ...optional('labelSelector', params.get('labelSelector')),
            ...optional('fieldSelector', params.get('fieldSelector')),
            ...optional('continue', params.get('continue')),
            ...optionalNumber('limit', intParam(params, 'limit')),
          }),
        };
      case 'create': {
        const body = this.parseBody(text, def);
        if (target.subresource === 'binding') {
          if (def !== pods) throw pathNotFound();
          return { code: 201, body: registry.bind(namespace, name, body, { dryRun: dryRunParam(params) }) };
        }
        return { code: 201, body: registry.create(def, namespace, body, { dryRun: dryRunParam(params) }) };
      }
      case 'update': {
        const body = this.parseBody(text, def);
        const existed = this.exists(def, namespace, name);
        const result = registry.update(def, namespace, name, body, subresource, {
          dryRun: dryRunParam(params),
        });
        return { code: existed ? 200 : 201, body: result };
      }
      case 'patch': {
        const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
        const type = patchContentTypes[contentType];
        if (type === undefined) throw unsupportedMediaType(contentType, Object.keys(patchContentTypes));
        const patch = parseJson(text);
        if (patch === undefined) throw badRequest('error decoding patch: invalid JSON');
        return {
          code: 200,
          body: registry.patch(def, namespace, name, type, patch, subresource, {
            dryRun: dryRunParam(params),
          }),
        };
      }
      case 'delete':
      case 'deletecollection': {
        const body = text.trim() === '' ? {} : parseJson(text);
        if (!isObject(body))
          throw badRequest(
            'DeleteOptions in version "v1" cannot be handled as a DeleteOptions: invalid JSON',
          );
        const options = deleteOptions(body, params);
        if (verb === 'delete') return { code: 200, body: registry.delete(def, namespace, name, options) };
        return {
          code: 200,
          body: registry.deleteCollection(
            def,
            {
              namespace,
              ...optional('labelSelector', params.get('labelSelector')),
              ...optional('fieldSelector', params.get('fieldSelector')),
            },
            options,
          ),
        };
      }
      default:
        throw methodNotAllowed();
    }
  }

  private exists(def: ResourceDef, namespace: string, name: string): boolean {
    try {
      this.options.registry.get(def, namespace, name);
      return true;
    } catch {
      return false;
    }
  }

  private serveWatch(
    req: IncomingMessage,
    res: ServerResponse,
    target: ResourceTarget,
    params: URLSearchParams,
    info: RequestInfo,
    drop: Extract<FaultRule, { kind: 'dropWatch' }> | undefined,
  ): number {
    const { registry } = this.options;
    // Mutable state of this stream, in one object: callbacks change it, so no narrowing applies.
    const stream: {
      started: boolean;
      closed: boolean;
      cutting: boolean;
      sent: number;
      buffered: string[];
      stopWatch?: () => void;
      timer?: NodeJS.Timeout;
      untrack?: () => void;
    } = { started: false, closed: false, cutting: false, sent: 0, buffered: [] };
    const finish = (mode: 'reset' | 'end') => {
      if (stream.closed) return;
      stream.closed = true;
      stream.stopWatch?.();
      if (stream.timer !== undefined) clearTimeout(stream.timer);
      stream.untrack?.();
      this.openWatches.delete(stopAll);
      if (mode === 'reset') res.destroy();
      else res.end();
    };
    const stopAll = () => {
      finish('end');
    };
    const send = (line: string) => {
      if (stream.closed || stream.cutting) return;
      stream.sent++;
      if (drop !== undefined && stream.sent >= (drop.afterEvents ?? 0)) {
        // Cut once this event is on the wire, so "after N events" means the client got N.
        stream.cutting = true;
        res.write(line, () => {
          finish(drop.mode ?? 'reset');
        });
        return;
      }
      res.write(line);
    };
    const write = (event: WatchEvent) => {
      // A stalled stream drops what it would have sent (faults.ts stallWatches): nothing is replayed.
      if (this.options.faults.stalled(info)) return;
      const line = `${JSON.stringify(event)}\n`;
      if (stream.started) send(line);
      else stream.buffered.push(line);
    };
    const startStream = () => {
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-cache, private',
        'Transfer-Encoding': 'chunked',
      });
      res.flushHeaders();
      stream.started = true;
    };

    let timeoutSeconds: number | undefined;
    try {
      timeoutSeconds = intParam(params, 'timeoutSeconds');
      const watch = registry.watch(
        target.def,
        {
          namespace: target.namespace,
          ...optional('labelSelector', params.get('labelSelector')),
          ...optional('fieldSelector', params.get('fieldSelector')),
          ...optional('resourceVersion', params.get('resourceVersion')),
          allowWatchBookmarks: boolParam(params.get('allowWatchBookmarks')),
          sendInitialEvents: boolParam(params.get('sendInitialEvents')),
        },
        write,
      );
      stream.stopWatch = () => {
        watch.stop();
      };
    } catch (error) {
      // A resourceVersion the watch cache no longer has is an ERROR event in a 200 stream, as the
      // cacher's error watcher sends it; bad selectors and parameters are plain HTTP errors.
      if (error instanceof ApiStatusError && error.code === 410) {
        startStream();
        res.end(`${JSON.stringify({ type: 'ERROR', object: error.status })}\n`);
        return 200;
      }
      return this.sendError(res, error);
    }

    startStream();
    this.openWatches.add(stopAll);
    stream.untrack = this.options.faults.trackWatch({
      info,
      close: (mode) => {
        finish(mode);
      },
    });
    req.on('close', stopAll);
    res.on('close', stopAll);
    stream.timer = setTimeout(stopAll, (timeoutSeconds ?? this.options.defaultWatchTimeoutSeconds) * 1000);
    stream.timer.unref();
    if (drop !== undefined && (drop.afterEvents ?? 0) === 0) {
      finish(drop.mode ?? 'reset');
      return 200;
    }
    for (const line of stream.buffered.splice(0)) send(line);
    return 200;
  }
}

function optional<K extends string>(key: K, value: string | null): Partial<Record<K, string>> {
  return value === null || value === '' ? {} : ({ [key]: value } as Record<K, string>);
}

function optionalNumber<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

function deleteOptions(body: JsonObject, params: URLSearchParams): DeleteOptions {
  const grace = getNumber(body, ['gracePeriodSeconds']) ?? intParam(params, 'gracePeriodSeconds');
  const preconditions = isObject(body.preconditions) ? body.preconditions : undefined;
  const uid = getString(preconditions, ['uid']);
  const resourceVersion = getString(preconditions, ['resourceVersion']);
  return {
    ...(grace !== undefined && { gracePeriodSeconds: grace }),
    ...((uid !== undefined || resourceVersion !== undefined) && {
      preconditions: {
        ...(uid !== undefined && { uid }),
        ...(resourceVersion !== undefined && { resourceVersion }),
      },
    }),
    dryRun: dryRunParam(params, body),
  };
}
