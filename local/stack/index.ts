// The local stack (issue #5 §1, `npm start` / `nlc start`): docs/local.md.
export { startLocalStack, DefaultDataDir, LocalStage, ServiceDir } from './stack.js';
export type {
  LocalStack,
  LocalStackOptions,
  KubeletTimings,
  RelayControls,
  SimulatorControls,
} from './stack.js';
export { runLocalStack } from './main.js';
export type { RunLocalStackOptions, StackIo } from './main.js';
export { demoCluster, demoNodeName, DemoDaemonSet } from './demoCluster.js';
export type { DemoClusterOptions } from './demoCluster.js';
export { DefaultPorts, LocalHost, PortInfo, PortNames } from './ports.js';
export type { PortName, StackPorts } from './ports.js';
export { snapshotReader, snapshotChanges } from './view.js';
export type { DecisionRow, NodeRow, SnapshotSource, StackSnapshot } from './view.js';
