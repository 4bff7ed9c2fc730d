// functions/podProcessing.ts: one Pod Changed event → upstream processPod (MarkPodsNotReady for a pod newly
// bound to a node that is not Ready; legacy mode: processNoTaintBaseEviction for that pod). The logic is
// shared/app/podProcessing.ts, the routing shared/app/dispatch.ts, the shell functions/shell.ts
// (docs/functions.md).
import { PodProcessingSource } from '../shared/app/podProcessing.js';
import { PodChangedDetailType, PodChangedEvent } from '../shared/events.js';
import { lambdaHandler } from './shell.js';

export const handler = lambdaHandler({
  name: 'podProcessing',
  source: PodProcessingSource,
  schema: PodChangedEvent,
  what: PodChangedDetailType,
  input: (event) => ({ kind: 'event', event }),
  keys: (event) => ({
    node: event.detail.pod.nodeName,
    pod: `${event.detail.pod.namespace}/${event.detail.pod.name}`,
  }),
});
