// evictionDrainer: upstream doNoExecuteTaintingPass / doEvictionPass over the zone queues, then the due
// pod evictions (shared/app/drainer.ts). Runs on its schedule ("Scheduled Event") and when the monitor
// invokes it asynchronously ({ source: 'nlc.monitor', cluster, reason }), and waits in process for the
// next item that becomes due within its budget (the steps of shared/app/dispatch.ts; the shell is
// functions/shell.ts). A payload of neither shape is logged naming the field and rethrown (retries,
// then the dead-letter queue).
import { z } from 'zod';
import { DrainerInvocation } from '../shared/app/drainer.js';
import { ScheduledEvent } from '../shared/events.js';
import { lambdaHandler } from './shell.js';

/** What this function accepts: its schedule, or the monitor's invoke. */
export const DrainerEvent = z.union([ScheduledEvent, DrainerInvocation]);
export type DrainerEvent = z.output<typeof DrainerEvent>;

export const handler = lambdaHandler({
  name: 'evictionDrainer',
  source: 'drainer',
  schema: DrainerEvent,
  what: 'eviction drainer event',
  input: (event) => ('cluster' in event ? { kind: 'invoke', invocation: event } : { kind: 'schedule' }),
});
