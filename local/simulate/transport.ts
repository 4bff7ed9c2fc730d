// In-process transports for `nlc simulate` (docs/architecture.md: transports may be in-process;
// decisions may not be re-implemented). The controller's Kubernetes adapter and the relay run unchanged over
// @kubernetes/client-node; only the bytes stop at the process boundary:
// - inProcessHttpLibrary: client-node's HttpLibrary that hands each request to the API simulator's own
//   request handler (ApiHttpServer.dispatch: authentication, RBAC rules, routing, admission, the request
//   log), so every call completes within the awaited service call and nothing waits on a socket;
// - inProcessWatch: client-node's Watch.watch over the simulator's registry watch, delivering events
//   synchronously, in resourceVersion order, as the change is written (the relay observes a kubelet's
//   renewal at the instant it happens: docs/simulate.md: "a renewal at t is probed at t").
import {
  ResponseContext,
  wrapHttpLibrary,
  type HttpLibrary,
  type RequestContext,
  type Watch,
} from '@kubernetes/client-node';
import type { Faults } from '../apiserver/faults.js';
import type { Registry } from '../apiserver/registry.js';
import { findResource, type ResourceDef } from '../apiserver/resources.js';
import type { ApiHttpServer } from '../apiserver/server.js';

function bodyText(request: RequestContext): string | undefined {
  const body = request.getBody();
  if (body === undefined) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  // client-node sends JSON as a string; multipart forms are never sent to the Kubernetes API.
  throw new TypeError('in-process transport: form-data bodies are not supported');
}

/**
 * client-node's HttpLibrary over the simulator's request handler.
 *
 * @example
 * const cluster = createKubernetesCluster(kubeConfig, { ..., transport: inProcessHttpLibrary(server) });
 */
export function inProcessHttpLibrary(server: Pick<ApiHttpServer, 'dispatch'>): HttpLibrary {
  return wrapHttpLibrary({
    async send(request: RequestContext): Promise<ResponseContext> {
      const url = new URL(request.getUrl());
      const headers = Object.fromEntries(
        Object.entries(request.getHeaders()).map(([name, value]) => [name.toLowerCase(), value]),
      );
      const body = bodyText(request);
      const response = await server.dispatch({
        method: request.getHttpMethod(),
        url: `${url.pathname}${url.search}`,
        headers,
        ...(body !== undefined && { body }),
      });
      return new ResponseContext(response.status, response.headers, {
        text: () => Promise.resolve(response.body),
        binary: () => Promise.resolve(Buffer.from(response.body)),
      });
    },
  });
}

/** The resource and namespace a watch path names (`/api/v1/nodes`, `/apis/g/v/namespaces/ns/leases`). */
function watchTarget(path: string): { def: ResourceDef; namespace: string } {
  const segments = path.split('/').filter((s) => s !== '');
  const [root, ...rest] = segments;
  const [group, version, tail] =
    root === 'api'
      ? ['', rest[0] ?? '', rest.slice(1)]
      : root === 'apis'
        ? [rest[0] ?? '', rest[1] ?? '', rest.slice(2)]
        : ['', '', []];
  const namespaced = tail[0] === 'namespaces' && tail.length === 3;
  const resource = namespaced ? tail[2] : tail.length === 1 ? tail[0] : undefined;
  const def = resource === undefined ? undefined : findResource(group, version, resource);
  if (def === undefined) throw new TypeError(`in-process watch: cannot watch ${path}`);
  return { def, namespace: namespaced ? (tail[1] ?? '') : '' };
}

function stringParam(value: string | number | boolean | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : String(value);
}

/**
 * client-node's Watch, served by the registry in process. Events reach `callback` as JSON (as over the
 * wire) before the write that caused them returns; aborting the returned controller stops the watch
 * (no `done` call, as the relay's reflector ignores the end of a watch it abandoned). Errors the
 * registry raises at the start (a resourceVersion too old: 410) go to `done`, as client-node reports
 * them; a watch the server ends (a restore: an ERROR event with 410, then the end) calls `done` with no
 * error, as client-node does when a stream ends. With `faults`, its watch stalls (Faults.stallWatches)
 * apply, as over HTTP, to `user`'s watches; the ERROR a watch ends with is delivered all the same, so a
 * stalled watch is ended as any other.
 *
 * @example
 * createRelay({ ..., watch: inProcessWatch(api.store.registry) });
 */
export function inProcessWatch(
  registry: Registry,
  options: { readonly faults?: Faults; readonly user?: string } = {},
): Pick<Watch, 'watch'> {
  return {
    watch(path, queryParams, callback, done) {
      const controller = new AbortController();
      const { def, namespace } = watchTarget(path);
      const info = {
        verb: 'watch',
        resource: def.resource,
        subresource: '',
        namespace,
        name: '',
        user: options.user ?? '',
      } as const;
      try {
        const resourceVersion = stringParam(queryParams.resourceVersion);
        const fieldSelector = stringParam(queryParams.fieldSelector);
        const labelSelector = stringParam(queryParams.labelSelector);
        const watch = registry.watch(
          def,
          {
            namespace,
            allowWatchBookmarks: queryParams.allowWatchBookmarks === true,
            ...(resourceVersion !== undefined && { resourceVersion }),
            ...(fieldSelector !== undefined && { fieldSelector }),
            ...(labelSelector !== undefined && { labelSelector }),
          },
          (event) => {
            if (controller.signal.aborted) return;
            if (event.type !== 'ERROR' && options.faults?.stalled(info) === true) return;
            // The object is this watch's own copy already (Watchers presents each event per watch).
            callback(event.type, event.object);
          },
          () => {
            if (!controller.signal.aborted) done(null);
          },
        );
        controller.signal.addEventListener('abort', () => {
          watch.stop();
        });
      } catch (error) {
        done(error);
      }
      return Promise.resolve(controller);
    },
  };
}
