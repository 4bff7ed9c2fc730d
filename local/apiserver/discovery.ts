// The discovery documents kubectl reads before it talks about a kind: /version, /api, /apis,
// /api/v1, /apis/<group>, /apis/<group>/<version>. Legacy (unaggregated) discovery only: kubectl asks
// for the aggregated form first and falls back when the answer is plain application/json.
import type { JsonObject } from './json.js';
import { type ResourceDef, type Verb, allResources, apiVersionOf } from './resources.js';

export interface VersionInfo {
  readonly major: string;
  readonly minor: string;
  readonly gitVersion: string;
}

/** The Kubernetes version the simulator reports (and models). */
export const defaultVersion: VersionInfo = { major: '1', minor: '33', gitVersion: 'v1.33.0' };

/**
 * The version a cluster of upstream minor `version` reports: what `nlc agreement` reads from /version
 * to tell which minor the cluster's own controller runs.
 *
 * @example
 * versionInfoOf('1.34'); // { major: '1', minor: '34', gitVersion: 'v1.34.0' }
 */
export function versionInfoOf(version: `1.${number}`): VersionInfo {
  const minor = version.slice(2);
  return { major: '1', minor, gitVersion: `v1.${minor}.0` };
}

export function versionDocument(version: VersionInfo): JsonObject {
  return {
    major: version.major,
    minor: version.minor,
    gitVersion: version.gitVersion,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2025-04-23T00:00:00Z',
    goVersion: 'go1.24.2',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

const mainVerbs: readonly Verb[] = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

function groups(): Map<string, ResourceDef[]> {
  const byGroupVersion = new Map<string, ResourceDef[]>();
  for (const def of allResources) {
    const key = apiVersionOf(def);
    byGroupVersion.set(key, [...(byGroupVersion.get(key) ?? []), def]);
  }
  return byGroupVersion;
}

export function apiVersionsDocument(serverAddress: string): JsonObject {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(group: string, versions: readonly string[]): JsonObject {
  const entries = versions.map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { name: group, versions: entries, preferredVersion: entries[0] ?? null };
}

export function apiGroupListDocument(): JsonObject {
  const names = [...new Set(allResources.filter((def) => def.group !== '').map((def) => def.group))];
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: names.map((group) => groupEntry(group, ['v1'])),
  };
}

export function apiGroupDocument(group: string): JsonObject | undefined {
  if (!allResources.some((def) => def.group === group)) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, ['v1']) };
}

export function apiResourceListDocument(groupVersion: string): JsonObject | undefined {
  const defs = groups().get(groupVersion);
  if (defs === undefined) return undefined;
  const resources: JsonObject[] = [];
  for (const def of defs) {
    resources.push({
      name: def.resource,
      singularName: def.singular,
      namespaced: def.namespaced,
      kind: def.kind,
      verbs: [...mainVerbs],
      ...(def.shortNames.length > 0 && { shortNames: [...def.shortNames] }),
    });
    for (const sub of def.subresources) {
      resources.push(
        sub === 'status'
          ? {
              name: `${def.resource}/status`,
              singularName: '',
              namespaced: def.namespaced,
              kind: def.kind,
              verbs: ['get', 'patch', 'update'],
            }
          : {
              name: `${def.resource}/binding`,
              singularName: '',
              namespaced: def.namespaced,
              kind: 'Binding',
              verbs: ['create'],
            },
      );
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}
