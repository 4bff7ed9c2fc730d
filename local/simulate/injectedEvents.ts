// `injectEvent` (docs/simulate.md): an event published on the bus as a holder of the relay's AWS role
// could, forged or replayed. Its detail is the scenario's fields merged over the wire detail of the event
// the relay would send now, built by the relay's own shaping and encoding:
// - Node Changed: the node as the API server holds it, trimmed as the relay's informer trims it
//   (nodeFromV1), type MODIFIED, and as the NoExecute taints before the change the node's own: the event
//   says "this is the node now", and a forged taint list reads as a change from the real one;
// - Pod Changed: the same for the pod (podFromV1), its own tolerations as the ones before;
// - Heartbeat Digest: the last digest the bus carried, as it was on the wire.
// Nothing here validates the result: the functions must face whatever a forger sends.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { nodeFromV1, podFromV1 } from '../../shared/adapters/kubernetes/mapping.js';
import { getNoExecuteTaints } from '../../shared/domain/taints.js';
import { encodeDetail, NodeChangedDetailType, PodChangedDetailType } from '../../shared/events.js';
import type { Wire } from '../apiserver/index.js';

type JsonRecord = Readonly<Record<string, unknown>>;

function isPlainObject(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `override` merged over `base`: where both hold an object the two merge, key by key, recursively;
 * anything else in `override` (an array, a scalar, null) replaces what `base` holds. Neither is changed:
 * the result is new where it differs from `base` and shares the rest.
 *
 * @example
 * mergeDetail({ node: { name: 'a-1', taints: [t1], labels: { a: '1' } } }, { node: { taints: [], labels: { b: '2' } } })
 * // { node: { name: 'a-1', taints: [], labels: { a: '1', b: '2' } } }
 */
export function mergeDetail(base: unknown, override: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(override)) return override;
  const merged: Record<string, unknown> = { ...base };
  for (const key of Object.keys(override)) {
    // Own keys only, set as data: a key `__proto__` from YAML is a field like any other.
    Object.defineProperty(merged, key, {
      value: mergeDetail(Object.hasOwn(base, key) ? base[key] : undefined, override[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return merged;
}

/** The wire detail of the Node Changed the relay would send for `node` as it is: a MODIFIED. */
export function nodeChangedNow(cluster: string, node: Wire<V1Node>): unknown {
  const mapped = nodeFromV1(node);
  if (!mapped.ok) throw new TypeError(`injectEvent: the relay cannot read node: ${mapped.message}`);
  return encodeDetail({
    detailType: NodeChangedDetailType,
    detail: {
      schemaVersion: 1,
      cluster,
      type: 'MODIFIED',
      node: mapped.value,
      oldNoExecuteTaints: getNoExecuteTaints(mapped.value.taints),
    },
  });
}

/** The wire detail of the Pod Changed the relay would send for `pod` as it is: a MODIFIED. */
export function podChangedNow(cluster: string, pod: Wire<V1Pod>): unknown {
  const mapped = podFromV1(pod);
  if (!mapped.ok) throw new TypeError(`injectEvent: the relay cannot read pod: ${mapped.message}`);
  return encodeDetail({
    detailType: PodChangedDetailType,
    detail: {
      schemaVersion: 1,
      cluster,
      type: 'MODIFIED',
      pod: mapped.value,
      oldTolerations: mapped.value.tolerations,
    },
  });
}
