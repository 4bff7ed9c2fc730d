// Port of upstream reconcileNodeLabels and labelReconcileInfo
// (pkg/controller/nodelifecycle/node_lifecycle_controller.go).
// What differs: pure. It returns the labels to add or update; the adapter patches them
// (upstream AddOrUpdateLabelsOnNode). Node.labels is never nil here, so upstream's
// "node.Labels == nil → nothing to reconcile" is the empty-record case, with the same result.
import type { Node } from './types.js';

/** k8s.io/api/core/v1 LabelOSStable. */
export const LabelOSStable = 'kubernetes.io/os';
/** k8s.io/api/core/v1 LabelArchStable. */
export const LabelArchStable = 'kubernetes.io/arch';
/** k8s.io/kubelet/pkg/apis LabelOS (the deprecated beta OS label). */
export const LabelOS = 'beta.kubernetes.io/os';
/** k8s.io/kubelet/pkg/apis LabelArch (the deprecated beta arch label). */
export const LabelArch = 'beta.kubernetes.io/arch';

export interface LabelReconcileInfo {
  readonly primaryKey: string;
  readonly secondaryKey: string;
  /** Create the secondary label from the primary one when it is missing. */
  readonly ensureSecondaryExists: boolean;
}

/**
 * Upstream labelReconcileInfo: the stable label is the source of truth for its beta twin
 * (upstream TODO #89477 plans to drop the beta labels).
 */
export const labelReconcileInfo: readonly LabelReconcileInfo[] = Object.freeze([
  { primaryKey: LabelOSStable, secondaryKey: LabelOS, ensureSecondaryExists: true },
  { primaryKey: LabelArchStable, secondaryKey: LabelArch, ensureSecondaryExists: true },
]);

/**
 * Upstream reconcileNodeLabels: the labels to add or update so that each beta OS/arch label
 * matches its stable label. Undefined when there is nothing to patch.
 */
export function reconcileNodeLabels(
  node: Pick<Node, 'labels'>,
): Readonly<Record<string, string>> | undefined {
  const labelsToUpdate: Record<string, string> = {};
  let any = false;
  for (const r of labelReconcileInfo) {
    // Own properties only: a label key such as "constructor" must not read the prototype.
    const primaryValue = Object.hasOwn(node.labels, r.primaryKey) ? node.labels[r.primaryKey] : undefined;
    // The primary label missing should not happen within the supported version skew unless
    // something outside modified the node; upstream ignores it.
    if (primaryValue === undefined) continue;
    const secondaryExists = Object.hasOwn(node.labels, r.secondaryKey);
    if (secondaryExists && node.labels[r.secondaryKey] !== primaryValue) {
      // The secondary label exists but disagrees with the primary one.
      labelsToUpdate[r.secondaryKey] = primaryValue;
      any = true;
    } else if (!secondaryExists && r.ensureSecondaryExists) {
      // Create the secondary label from the primary one.
      labelsToUpdate[r.secondaryKey] = primaryValue;
      any = true;
    }
  }
  return any ? labelsToUpdate : undefined;
}
