// The OpenAPI v3 documents kubectl reads, reduced to what it uses them for: finding the PATCH
// operation of a kind (by x-kubernetes-group-version-kind) and whether it takes the fieldValidation
// query parameter (cli-runtime's queryParamVerifierV3). When it does, kubectl leaves field validation
// to the server and needs no schemas, which is how `kubectl apply --dry-run=client` works here.
// Deviation: no component schemas are served (kubectl falls back to its compiled-in types).
import type { JsonObject } from './json.js';
import { type ResourceDef, allResources, apiVersionOf } from './resources.js';

function groupVersionPath(def: Pick<ResourceDef, 'group' | 'version'>): string {
  return def.group === '' ? `api/${def.version}` : `apis/${def.group}/${def.version}`;
}

const hash = 'nlc-simulator-1';

/** GET /openapi/v3: where each group-version's document lives. */
export function openApiV3Root(): JsonObject {
  const paths: JsonObject = {};
  for (const def of allResources) {
    const path = groupVersionPath(def);
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
  }
  return { paths };
}

/** GET /openapi/v3/api/v1, /openapi/v3/apis/<group>/<version>. */
export function openApiV3Document(path: string): JsonObject | undefined {
  const defs = allResources.filter((def) => groupVersionPath(def) === path);
  if (defs.length === 0) return undefined;
  const paths: JsonObject = {};
  const query = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
  for (const def of defs) {
    const base = `/${groupVersionPath(def)}${def.namespaced ? '/namespaces/{namespace}' : ''}/${def.resource}`;
    const gvk = { group: def.group, version: def.version, kind: def.kind };
    const operation = (verb: string, action: string, params: readonly string[]) => ({
      [verb]: {
        operationId: `${verb}${def.kind}`,
        'x-kubernetes-action': action,
        'x-kubernetes-group-version-kind': gvk,
        parameters: params.map(query),
        responses: { '200': { description: 'OK' } },
      },
    });
    paths[base] = {
      ...operation('post', 'post', ['dryRun', 'fieldManager', 'fieldValidation']),
      ...operation('get', 'list', []),
    };
    paths[`${base}/{name}`] = {
      ...operation('get', 'get', []),
      ...operation('put', 'put', ['dryRun', 'fieldManager', 'fieldValidation']),
      ...operation('patch', 'patch', ['dryRun', 'fieldManager', 'fieldValidation', 'force']),
      ...operation('delete', 'delete', ['dryRun', 'gracePeriodSeconds']),
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: apiVersionOf(defs[0] ?? { group: '', version: 'v1' }) },
    paths,
    components: { schemas: {} },
  };
}
