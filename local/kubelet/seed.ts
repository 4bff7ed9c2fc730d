// Writing the objects of a cluster that already exists when a simulation starts (docs/simulate.md: "The
// cluster under `nodes` and `pods` exists at t = 0 exactly as described"). Such objects have a history
// no API call can reproduce at t = 0: a creationTimestamp in the past, a node's registered taints with
// no not-ready taint that TaintNodesByCondition admission would add today, pods already running, pods
// without the default tolerations when a scenario says so. So each is built the way the API would
// build it (a dry-run create: decoding, defaults, admission, validation, uid and timestamps), then
// given its final state, validated again, and committed to the object store directly, where it
// appears as one ADDED event like any create.
import type { ApiStore, Wire } from '../apiserver/index.js';
import { type Json, type JsonObject, getString } from '../apiserver/json.js';
import { type ResourceDef, nodes, pods } from '../apiserver/resources.js';
import { invalid } from '../apiserver/status.js';
import { storageKey } from '../apiserver/store.js';

export type SeedKind = 'nodes' | 'pods';

const defs: Readonly<Record<SeedKind, ResourceDef>> = { nodes, pods };

/**
 * Creates `body` as the API would, lets `finish` set the state the object reached in its past (in
 * place, timestamps in canonical form), and commits it without admission. Throws the API's errors
 * (AlreadyExists, Invalid) as a create would. Returns the object as a create answers it (the
 * registry's present: stored fields shared and frozen, not a deep copy).
 */
export function writeExistingObject<T>(
  store: ApiStore,
  kind: SeedKind,
  body: Wire<T>,
  finish: (obj: JsonObject) => void,
): Wire<T> {
  const def = defs[kind];
  const requested = def.namespaced
    ? (getString(body as unknown as Json, ['metadata', 'namespace']) ?? '')
    : '';
  const built = store.registry.create(def, requested, body as unknown as Json, { dryRun: true });
  finish(built);
  const name = getString(built, ['metadata', 'name']) ?? '';
  const namespace = getString(built, ['metadata', 'namespace']) ?? '';
  const errors = def.validate(built);
  if (errors.length > 0) throw invalid({ group: def.group, kind: def.kind }, name, errors);
  const stored = store.registry.store.put(
    def.storage,
    storageKey(def.namespaced ? namespace : '', name),
    built,
  );
  return store.registry.present(def, stored) as unknown as Wire<T>;
}
