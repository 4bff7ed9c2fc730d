// monitorNodeHealth: one Heartbeat Digest → one upstream monitorNodeHealth pass (shared/app/monitor.ts),
// and the once-a-minute schedule (detail-type "Scheduled Event") → the fallback check that reports a
// silent relay and starts the drainer. One handler for both rules (serverless.yml), told apart by
// detail-type; the routing is shared/app/dispatch.ts, the shell functions/shell.ts. A malformed digest
// is logged naming the field and rethrown (Lambda retries, then the function's dead-letter queue);
// nothing is written.
import { z } from 'zod';
import { HeartbeatDigestDetailType, HeartbeatDigestEvent, ScheduledEvent } from '../shared/events.js';
import { lambdaHandler } from './shell.js';

/** What this function accepts: a Heartbeat Digest from the relay, or its schedule. */
export const MonitorEvent = z.discriminatedUnion('detail-type', [HeartbeatDigestEvent, ScheduledEvent]);
export type MonitorEvent = z.output<typeof MonitorEvent>;

export const handler = lambdaHandler({
  name: 'monitorNodeHealth',
  source: 'monitor',
  schema: MonitorEvent,
  what: HeartbeatDigestDetailType,
  input: (event) =>
    event['detail-type'] === 'Scheduled Event' ? { kind: 'schedule' } : { kind: 'event', event },
  keys: (event): Record<string, number> =>
    event['detail-type'] === 'Scheduled Event' ? {} : { sequence: event.detail.sequence },
});
