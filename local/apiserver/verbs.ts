// The handlers of the non-watch verbs: each turns a routed request (target, query, body) into the
// registry call and the HTTP status upstream answers with (201 for creates, 200 or 201 for PUT).
import type { IncomingMessage } from 'node:http';
import { isObject, parseJson } from './json.js';
import { patchContentTypes } from './patch.js';
import type { Registry } from './registry.js';
import {
  deleteOptions,
  dryRunParam,
  intParam,
  optional,
  optionalNumber,
  parseBody,
} from './requestParams.js';
import { type ResourceDef, type Verb, pods } from './resources.js';
import type { ResourceTarget } from './routing.js';
import { badRequest, methodNotAllowed, pathNotFound, unsupportedMediaType } from './status.js';

/** Serves one get, list, create, update, patch, delete or deletecollection. */
export function serveVerb(
  registry: Registry,
  req: IncomingMessage,
  method: string,
  verb: Verb,
  target: ResourceTarget,
  params: URLSearchParams,
  text: string,
): { code: number; body: unknown } {
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
      const body = parseBody(text, def);
      if (target.subresource === 'binding') {
        if (def !== pods) throw pathNotFound();
        return { code: 201, body: registry.bind(namespace, name, body, { dryRun: dryRunParam(params) }) };
      }
      return { code: 201, body: registry.create(def, namespace, body, { dryRun: dryRunParam(params) }) };
    }
    case 'update': {
      const body = parseBody(text, def);
      const existed = exists(registry, def, namespace, name);
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
        throw badRequest('DeleteOptions in version "v1" cannot be handled as a DeleteOptions: invalid JSON');
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

function exists(registry: Registry, def: ResourceDef, namespace: string, name: string): boolean {
  try {
    registry.get(def, namespace, name);
    return true;
  } catch {
    return false;
  }
}
