// `nlc simulate` (issue #5 §2): scenarios in virtual time through the real relay, functions, state
// stores and API simulator. The format and the output: docs/simulate.md.
export {
  parseScenario,
  parseScenarioDocument,
  scenarioFromObject,
  scenarioDocumentFromObject,
  isMultiCluster,
  DefaultScenarioStart,
  ScenarioActionKinds,
} from './scenario.js';
export type {
  AnyScenario,
  MultiClusterScenario,
  Scenario,
  ScenarioAction,
  ScenarioActionKind,
  TimelineEntry,
} from './scenario.js';
export { runSimulation, FunctionPriority } from './simulation.js';
export type { Diagnostic, SimulationOptions, SimulationResult, SimulationStats } from './simulation.js';
export { toJsonLines, timelineLine } from './timeline.js';
export type { SummaryRecord, TimelineKind, TimelineLine, TimelineRecord } from './timeline.js';
