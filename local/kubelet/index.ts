// The kubelet fleet simulator (issue #3 §2): kubelets that behave as upstream's toward the node
// lifecycle controller, over the API simulator's in-process store, on a real or virtual Scheduler.
export { KubeletFleet } from './kubeletFleet.js';
export type { KubeletFleetOptions, SeedCluster, SimulatedNode } from './kubeletFleet.js';
export { SimulatedKubelet } from './simulatedKubelet.js';
export type { KubeletSettings, KubeletState } from './simulatedKubelet.js';
export {
  NamespaceNodeLease,
  kubeletConditionTypes,
  nodeLeaseDurationSeconds,
  nodeLeaseRenewIntervalFraction,
  nodeStatusReportFrequency,
  nodeStatusUpdateFrequency,
  reportedCondition,
} from './nodeStatus.js';
export type { NodeRegistration, ReportedCondition } from './nodeStatus.js';
export { defaultDaemonSetName, simulatedImage } from './pods.js';
export type { SimulatedPod } from './pods.js';
