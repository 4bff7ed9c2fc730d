// functions/nodeTaints.ts: one Node Changed event → upstream doNodeProcessingPassWorker for that node
// (doNoScheduleTaintingPass + reconcileNodeLabels), keeping the Nodes table's copy current. The logic is
// shared/app/nodeTaints.ts, the routing shared/app/dispatch.ts, the shell functions/shell.ts
// (docs/functions.md).
import { NodeTaintsSource } from '../shared/app/nodeTaints.js';
import { NodeChangedDetailType, NodeChangedEvent } from '../shared/events.js';
import { lambdaHandler } from './shell.js';

export const handler = lambdaHandler({
  name: 'nodeTaints',
  source: NodeTaintsSource,
  schema: NodeChangedEvent,
  what: NodeChangedDetailType,
  input: (event) => ({ kind: 'event', event }),
  keys: (event) => ({ node: event.detail.node.name }),
});
