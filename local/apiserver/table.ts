// Server-side printing (meta.k8s.io/v1 Table), so plain `kubectl get nodes` / `kubectl get pods` show
// the usual columns against the simulator. Column sets follow pkg/printers/internalversion for the
// kinds served; others get the default Name / Created At table.
import { type Json, type JsonObject, getArray, getObject, getString, isObject } from './json.js';
import type { ResourceDef } from './resources.js';
import { parseTime } from './timestamps.js';

/** Whether the Accept header asks for a Table (kubectl get does, unless -o json/yaml/name). */
export function wantsTable(accept: string | undefined): boolean {
  return accept !== undefined && /as=Table/.test(accept);
}

/** duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  if (h < 24 * 8) return h % 24 === 0 ? `${Math.floor(h / 24)}d` : `${Math.floor(h / 24)}d${h % 24}h`;
  if (h < 24 * 365 * 2) return `${Math.floor(h / 24)}d`;
  const y = Math.floor(h / (24 * 365));
  if (h < 24 * 365 * 8) {
    const d = Math.floor(h / 24) % 365;
    return d === 0 ? `${y}y` : `${y}y${d}d`;
  }
  return `${y}y`;
}

interface Column {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'date';
  readonly format?: string;
  readonly priority?: number;
  readonly cell: (obj: JsonObject, now: number) => Json;
}

const nameColumn: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  cell: (o) => getString(o, ['metadata', 'name']) ?? '',
};

function age(obj: JsonObject, now: number): string {
  const created = parseTime(getString(obj, ['metadata', 'creationTimestamp']) ?? '');
  return created === undefined ? '<unknown>' : humanDuration(now - created);
}

const ageColumn: Column = { name: 'Age', type: 'string', cell: age };

function nodeStatus(node: JsonObject): string {
  const ready = getArray(node, ['status', 'conditions']).find((c) => getString(c, ['type']) === 'Ready');
  const status = getString(ready, ['status']);
  const parts = [status === 'True' ? 'Ready' : status === undefined ? 'Unknown' : 'NotReady'];
  if (getObject(node, ['spec'])?.unschedulable === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function nodeRoles(node: JsonObject): string {
  const labels = getObject(node, ['metadata', 'labels']) ?? {};
  const roles = Object.keys(labels)
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter((r) => r !== '');
  return roles.length === 0 ? '<none>' : roles.sort().join(',');
}

function address(node: JsonObject, type: string): string {
  const found = getArray(node, ['status', 'addresses']).find((a) => getString(a, ['type']) === type);
  return getString(found, ['address']) ?? '<none>';
}

function podReady(pod: JsonObject): string {
  const statuses = getArray(pod, ['status', 'containerStatuses']);
  const total = getArray(pod, ['spec', 'containers']).length;
  const ready = statuses.filter((s) => isObject(s) && s.ready === true).length;
  return `${ready}/${total}`;
}

function podStatus(pod: JsonObject): string {
  if (getString(pod, ['metadata', 'deletionTimestamp']) !== undefined) return 'Terminating';
  return getString(pod, ['status', 'reason']) ?? getString(pod, ['status', 'phase']) ?? 'Unknown';
}

function columnsFor(def: ResourceDef): readonly Column[] {
  switch (def.resource) {
    case 'nodes':
      return [
        nameColumn,
        { name: 'Status', type: 'string', cell: nodeStatus },
        { name: 'Roles', type: 'string', cell: nodeRoles },
        ageColumn,
        {
          name: 'Version',
          type: 'string',
          cell: (o) => getString(o, ['status', 'nodeInfo', 'kubeletVersion']) ?? '',
        },
        { name: 'Internal-IP', type: 'string', priority: 1, cell: (o) => address(o, 'InternalIP') },
        { name: 'External-IP', type: 'string', priority: 1, cell: (o) => address(o, 'ExternalIP') },
      ];
    case 'pods':
      return [
        nameColumn,
        { name: 'Ready', type: 'string', cell: podReady },
        { name: 'Status', type: 'string', cell: podStatus },
        {
          name: 'Restarts',
          type: 'string',
          cell: (o) =>
            String(
              getArray(o, ['status', 'containerStatuses']).reduce(
                (n: number, s) =>
                  n + (isObject(s) && typeof s.restartCount === 'number' ? s.restartCount : 0),
                0,
              ),
            ),
        },
        ageColumn,
        {
          name: 'IP',
          type: 'string',
          priority: 1,
          cell: (o) => getString(o, ['status', 'podIP']) ?? '<none>',
        },
        {
          name: 'Node',
          type: 'string',
          priority: 1,
          cell: (o) => getString(o, ['spec', 'nodeName']) ?? '<none>',
        },
      ];
    case 'namespaces':
      return [
        nameColumn,
        { name: 'Status', type: 'string', cell: (o) => getString(o, ['status', 'phase']) ?? '' },
        ageColumn,
      ];
    case 'leases':
      return [
        nameColumn,
        {
          name: 'Holder',
          type: 'string',
          cell: (o) => getString(o, ['spec', 'holderIdentity']) ?? '<unknown>',
        },
        ageColumn,
      ];
    default:
      return [
        nameColumn,
        {
          name: 'Created At',
          type: 'date',
          cell: (o) => getString(o, ['metadata', 'creationTimestamp']) ?? '',
        },
      ];
  }
}

/** The Table for a list (or a single object) as the server prints it. */
export function tableFor(def: ResourceDef, body: unknown, now: number): JsonObject {
  const source = isObject(body) ? body : {};
  const isList = Array.isArray(source.items);
  const items = isList ? getArray(source, ['items']).filter(isObject) : [source];
  const columns = columnsFor(def);
  const metadata: JsonObject = {};
  const rv = getString(source, ['metadata', 'resourceVersion']);
  if (isList && rv !== undefined) metadata.resourceVersion = rv;
  const cont = getString(source, ['metadata', 'continue']);
  if (isList && cont !== undefined) metadata.continue = cont;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: '',
      priority: c.priority ?? 0,
    })),
    rows: items.map((item) => ({
      cells: columns.map((c) => c.cell(item, now)),
      object: {
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: getObject(item, ['metadata']) ?? {},
      },
    })),
  };
}
