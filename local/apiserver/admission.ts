// The admission plugins of a default kube-apiserver that change what this project sees:
// - DefaultTolerationSeconds (pods, Create and Update, never subresources): the 300 s not-ready and
//   unreachable NoExecute tolerations, decided by shared/domain/tolerations.ts (docs/upstream.md#defaulttolerationseconds);
// - TaintNodesByCondition (plugin/pkg/admission/nodetaint, nodes, Create only): a new node gets
//   node.kubernetes.io/not-ready:NoSchedule until the controller sees it Ready;
// - NamespaceLifecycle: no new objects in a missing or terminating namespace (namespaceLifecycle.ts,
//   with the rest of what kube-apiserver does for namespaces).
import { matchTaint, TaintNodeNotReady } from '../../shared/domain/taints.js';
import type { Taint, TaintEffect, Toleration, TolerationOperator } from '../../shared/domain/types.js';
import {
  type DefaultTolerationSecondsOptions,
  defaultTolerationSeconds,
} from '../../shared/domain/tolerations.js';
import { type Json, type JsonObject, child, getArray, getNumber, getString } from './json.js';

/** A JSON toleration as the domain reads it; Go decodes a null field as "". */
function toToleration(raw: Json): Toleration {
  const toleration: {
    key?: string;
    operator?: TolerationOperator | '';
    value?: string;
    effect?: TaintEffect | '';
    tolerationSeconds?: number;
  } = {};
  const key = getString(raw, ['key']);
  const operator = getString(raw, ['operator']);
  const value = getString(raw, ['value']);
  const effect = getString(raw, ['effect']);
  const seconds = getNumber(raw, ['tolerationSeconds']);
  if (key !== undefined) toleration.key = key;
  if (operator !== undefined) toleration.operator = operator as TolerationOperator | '';
  if (value !== undefined) toleration.value = value;
  if (effect !== undefined) toleration.effect = effect as TaintEffect | '';
  if (seconds !== undefined) toleration.tolerationSeconds = seconds;
  return toleration;
}

function fromToleration(toleration: Toleration): JsonObject {
  const out: JsonObject = {};
  if (toleration.key !== undefined) out.key = toleration.key;
  if (toleration.operator !== undefined) out.operator = toleration.operator;
  if (toleration.value !== undefined) out.value = toleration.value;
  if (toleration.effect !== undefined) out.effect = toleration.effect;
  if (toleration.tolerationSeconds !== undefined) out.tolerationSeconds = toleration.tolerationSeconds;
  return out;
}

/** DefaultTolerationSeconds: appends the default tolerations the pod lacks (in place). */
export function admitDefaultTolerationSeconds(
  pod: JsonObject,
  options: DefaultTolerationSecondsOptions,
): void {
  const spec = child(pod, 'spec');
  const existing = getArray(spec, ['tolerations']);
  const withDefaults = defaultTolerationSeconds(existing.map(toToleration), options);
  const added = withDefaults.slice(existing.length).map(fromToleration);
  if (added.length > 0) spec.tolerations = [...existing, ...added];
}

const notReadyNoSchedule: Taint = { key: TaintNodeNotReady, effect: 'NoSchedule' };

/** TaintNodesByCondition: a node is created with the not-ready:NoSchedule taint (in place). */
export function admitTaintNodesByCondition(node: JsonObject): void {
  const spec = child(node, 'spec');
  const taints = getArray(spec, ['taints']);
  const present = taints.some((raw) =>
    matchTaint(
      { key: getString(raw, ['key']) ?? '', effect: (getString(raw, ['effect']) ?? '') as TaintEffect },
      notReadyNoSchedule,
    ),
  );
  if (!present) spec.taints = [...taints, { key: TaintNodeNotReady, effect: 'NoSchedule' }];
}
