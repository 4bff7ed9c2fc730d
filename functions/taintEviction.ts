// functions/taintEviction.ts: the taint eviction controller, for Node Changed (upstream handleNodeUpdate)
// and Pod Changed (upstream handlePodUpdate) events. The logic is shared/app/taintEviction.ts, the
// routing shared/app/dispatch.ts, the shell functions/shell.ts (docs/functions.md). The drainer fires
// the timers it schedules.
import { z } from 'zod';
import { TaintEvictionSource } from '../shared/app/taintEviction.js';
import {
  NodeChangedDetailType,
  NodeChangedEvent,
  PodChangedDetailType,
  PodChangedEvent,
} from '../shared/events.js';
import { lambdaHandler } from './shell.js';

/**
 * The two events this function is subscribed to, whole: the detail's schema depends on `detail-type`,
 * which an envelope would drop.
 */
const TaintEvictionEvent = z.discriminatedUnion('detail-type', [NodeChangedEvent, PodChangedEvent], {
  // Typed loosely on purpose: a non-object input reaches this callback too (see shared/events.ts).
  error: (iss: { readonly code?: string }) =>
    iss.code === 'invalid_union'
      ? `expected "${NodeChangedDetailType}" or "${PodChangedDetailType}"`
      : undefined,
});

export const handler = lambdaHandler({
  name: 'taintEviction',
  source: TaintEvictionSource,
  schema: TaintEvictionEvent,
  what: `${NodeChangedDetailType} or ${PodChangedDetailType} event`,
  input: (event) => ({ kind: 'event', event }),
  keys: (event): Record<string, string> =>
    event['detail-type'] === NodeChangedDetailType
      ? { node: event.detail.node.name }
      : { node: event.detail.pod.nodeName, pod: `${event.detail.pod.namespace}/${event.detail.pod.name}` },
});
