// Where a request goes: the URL path to a discovery document or to a resource target (group, version,
// namespace, name, subresource), and the HTTP method to the API verb RBAC rules and faults speak of.
import {
  apiGroupDocument,
  apiGroupListDocument,
  apiResourceListDocument,
  apiVersionsDocument,
} from './discovery.js';
import type { JsonObject } from './json.js';
import { openApiV3Document, openApiV3Root } from './openapi.js';
import { type ResourceDef, type Verb, findResource } from './resources.js';

export interface ResourceTarget {
  readonly def: ResourceDef;
  readonly namespace: string;
  readonly name: string;
  readonly subresource: string;
}

export type Route =
  | { readonly kind: 'resource'; readonly target: ResourceTarget }
  | { readonly kind: 'document'; readonly body: JsonObject }
  | { readonly kind: 'notFound' };

export function route(segments: readonly string[], serverAddress: string): Route {
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

export function verbFor(method: string, target: ResourceTarget, watch: boolean): Verb | undefined {
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
