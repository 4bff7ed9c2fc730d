// infra/serverless/offline-eventbridge.cjs: serverless-offline-aws-eventbridge as the local stack runs it.
// Its routing must be EventBridge's for serverless.yml's rules (the same answers as the simulator's
// exact-value matcher, local/simulate/routing.ts), its schedule events must be what the monitor's and the
// drainer's parsers accept, its invocations must honour reserved concurrency and Lambda's retries, and
// the mock PutEvents endpoint must answer the SDK's client properly.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { afterEach, describe, expect, it } from 'vitest';
import { DrainerEvent } from '../../../functions/evictionDrainer.js';
import { MonitorEvent } from '../../../functions/monitorNodeHealth.js';
import {
  parseServerlessRules,
  ServerlessYmlUrl,
  targetsOf,
  type EventRule,
} from '../../../local/simulate/routing.js';
import {
  HeartbeatDigestDetailType,
  NodeChangedDetailType,
  PodChangedDetailType,
  RelaySource,
} from '../../../shared/events.js';

interface Entry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  EventBusName?: string;
  Resources?: string[];
  Time?: string;
}
interface FunctionDefinition {
  reservedConcurrency?: number;
  maximumRetryAttempts?: number;
  environment?: Record<string, string>;
}
interface PluginInstance {
  eventBuses: Record<string, string>;
  config: unknown;
  options: Record<string, unknown>;
  lambda: unknown;
  mqClient: unknown;
  verifyIsSubscribed(subscriber: unknown, entry: Entry): boolean;
  scheduledEntry(functionKey: string, event: unknown): Entry;
  convertEntryAndInputToEvent(entry: Entry, input?: unknown): Record<string, unknown>;
  invokeSubscriber(functionKey: string, entry: Entry, input?: unknown): Promise<void>;
  putEvents(request: IncomingMessage, response: ServerResponse): void;
}
type PluginClass = new (
  serverless: unknown,
  options: Record<string, unknown>,
  logging: { log: { notice(message: string): void } },
) => PluginInstance;

const Plugin = createRequire(import.meta.url)(
  '../../../infra/serverless/offline-eventbridge.cjs',
) as PluginClass;

const Bus = 'nlc-dev';
const Cluster = 'default';

function serverlessStub(
  functions: Record<string, FunctionDefinition> = {},
  commands: string[] = ['package'],
  custom: Record<string, unknown> = {},
) {
  const service = {
    service: 'nlc',
    custom,
    provider: {
      region: 'us-east-1',
      environment: { NODE_OPTIONS: '--enable-source-maps' } as Record<string, string>,
    },
    getAllFunctions: () => Object.keys(functions),
    getFunction: (name: string) => {
      const fn = functions[name];
      if (fn === undefined) throw new Error(`no function ${name}`);
      return fn;
    },
  };
  return { service, processedInput: { commands }, config: {} };
}

const notices: string[] = [];
function newPlugin(functions?: Record<string, FunctionDefinition>): PluginInstance {
  const plugin = new Plugin(serverlessStub(functions), {}, { log: { notice: (m) => notices.push(m) } });
  plugin.eventBuses = { EventBus: Bus };
  plugin.config = {
    awsConfig: { region: 'us-east-1', accountId: '000000000000' },
    eventBridgeMockServerConfig: { importedEventBuses: {} },
    pluginConfigOptions: { debug: false },
  };
  plugin.options = { retryDelayMs: 0 };
  return plugin;
}

/** The one detail-type a rule's pattern lists. */
function detailTypeOf(rule: EventRule | undefined): string {
  const value = rule?.pattern['detail-type'];
  return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '';
}

/** serverless.yml's event rules, with the bus each names, as the plugin receives them. */
async function subscribers(): Promise<{ functionKey: string; event: unknown; rule: EventRule }[]> {
  const rules = parseServerlessRules(await readFile(ServerlessYmlUrl, 'utf8'), [Cluster]);
  return rules
    .filter((r): r is EventRule => r.kind === 'event')
    .map((rule) => ({
      functionKey: rule.function,
      rule,
      event: { pattern: rule.pattern, eventBus: { 'Fn::GetAtt': ['EventBus', 'Name'] } },
    }));
}

describe('offline-eventbridge: matching serverless.yml rules as EventBridge does', () => {
  const detailTypes = [NodeChangedDetailType, PodChangedDetailType, HeartbeatDigestDetailType, 'Other Thing'];
  const sources = [RelaySource, 'someone.else'];
  const clusters = [Cluster, 'staging'];

  it('routes every combination of source, detail-type and detail.cluster to the functions the rules name', async () => {
    const plugin = newPlugin();
    const subs = await subscribers();
    expect(subs.length).toBeGreaterThanOrEqual(5);
    for (const Source of sources) {
      for (const DetailType of detailTypes) {
        for (const cluster of clusters) {
          const entry: Entry = {
            Source,
            DetailType,
            Detail: JSON.stringify({ cluster, schemaVersion: 1 }),
            EventBusName: Bus,
          };
          const envelope = {
            source: Source,
            'detail-type': DetailType,
            detail: { cluster, schemaVersion: 1 },
          };
          const routed = [
            ...new Set(subs.filter((s) => plugin.verifyIsSubscribed(s, entry)).map((s) => s.functionKey)),
          ];
          expect(routed.sort(), `${Source} / ${DetailType} / ${cluster}`).toEqual(
            targetsOf(
              envelope,
              subs.map((s) => s.rule),
            ).sort(),
          );
        }
      }
    }
  });

  it('sends the relay events to the functions issue #4 lists', async () => {
    const plugin = newPlugin();
    const subs = await subscribers();
    const routed = (DetailType: string) =>
      [
        ...new Set(
          subs
            .filter((s) =>
              plugin.verifyIsSubscribed(s, {
                Source: RelaySource,
                DetailType,
                Detail: JSON.stringify({ cluster: Cluster }),
                EventBusName: Bus,
              }),
            )
            .map((s) => s.functionKey),
        ),
      ].sort();
    expect(routed(NodeChangedDetailType)).toEqual(['nodeTaints', 'taintEviction']);
    expect(routed(PodChangedDetailType)).toEqual(['podProcessing', 'taintEviction']);
    expect(routed(HeartbeatDigestDetailType)).toEqual(['monitorNodeHealth']);
  });

  it('matches nothing when a field the pattern names is missing (upstream skips the check)', async () => {
    const plugin = newPlugin();
    const [first] = await subscribers();
    const full: Entry = {
      Source: RelaySource,
      DetailType: detailTypeOf(first?.rule),
      Detail: JSON.stringify({ cluster: Cluster }),
      EventBusName: Bus,
    };
    expect(plugin.verifyIsSubscribed(first, full)).toBe(true);
    expect(plugin.verifyIsSubscribed(first, { ...full, DetailType: undefined })).toBe(false);
    expect(plugin.verifyIsSubscribed(first, { ...full, Detail: undefined })).toBe(false);
    expect(plugin.verifyIsSubscribed(first, { ...full, Source: undefined })).toBe(false);
  });

  it('delivers only events put on the rule bus, by exact name or ARN', async () => {
    const plugin = newPlugin();
    const [first] = await subscribers();
    const entry: Entry = {
      Source: RelaySource,
      DetailType: detailTypeOf(first?.rule),
      Detail: JSON.stringify({ cluster: Cluster }),
    };
    expect(plugin.verifyIsSubscribed(first, { ...entry, EventBusName: Bus })).toBe(true);
    expect(
      plugin.verifyIsSubscribed(first, {
        ...entry,
        EventBusName: `arn:aws:events:us-east-1:000000000000:event-bus/${Bus}`,
      }),
    ).toBe(true);
    // Upstream compares by substring: "nlc" would match "nlc-dev".
    expect(plugin.verifyIsSubscribed(first, { ...entry, EventBusName: 'nlc' })).toBe(false);
    // No bus named: the default bus.
    expect(plugin.verifyIsSubscribed(first, entry)).toBe(false);
  });
});

describe('offline-eventbridge: schedules', () => {
  it("fires EventBridge's Scheduled Event, which the monitor and the drainer accept", () => {
    const plugin = newPlugin();
    const entry = plugin.scheduledEntry('monitorNodeHealth', { name: 'nlc-dev-monitorNodeHealth-schedule' });
    const event = plugin.convertEntryAndInputToEvent(entry);
    expect(event).toMatchObject({
      source: 'aws.events',
      'detail-type': 'Scheduled Event',
      detail: {},
      account: '000000000000',
      region: 'us-east-1',
      resources: ['arn:aws:events:us-east-1:000000000000:rule/nlc-dev-monitorNodeHealth-schedule'],
    });
    expect(event.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(MonitorEvent.safeParse(event).success).toBe(true);
    expect(DrainerEvent.safeParse(event).success).toBe(true);
  });

  it("takes the event's time from the entry's Time when it has one", () => {
    const plugin = newPlugin();
    const event = plugin.convertEntryAndInputToEvent({
      Source: RelaySource,
      DetailType: NodeChangedDetailType,
      Detail: '{}',
      Time: '2026-01-29T09:00:00.123Z',
    });
    expect(event.time).toBe('2026-01-29T09:00:00Z');
  });
});

describe('offline-eventbridge: invocations', () => {
  function fakeLambda(run: (event: unknown) => Promise<void>) {
    return {
      get: () => {
        let event: unknown;
        return {
          setEvent: (e: unknown) => {
            event = e;
          },
          runHandler: () => run(event),
        };
      },
    };
  }
  const entry: Entry = {
    Source: RelaySource,
    DetailType: HeartbeatDigestDetailType,
    Detail: '{"cluster":"default"}',
  };

  it('runs at most reservedConcurrency invocations of a function at once', async () => {
    const plugin = newPlugin({ monitorNodeHealth: { reservedConcurrency: 1 } });
    let active = 0;
    let most = 0;
    plugin.lambda = fakeLambda(async () => {
      active++;
      most = Math.max(most, active);
      await new Promise((resolve) => setImmediate(resolve));
      active--;
    });
    await Promise.all([1, 2, 3, 4].map(() => plugin.invokeSubscriber('monitorNodeHealth', entry)));
    expect(most).toBe(1);
  });

  it('retries a failed invocation maximumRetryAttempts times, then gives up without throwing', async () => {
    const plugin = newPlugin({ nodeTaints: {}, podProcessing: { maximumRetryAttempts: 0 } });
    let calls = 0;
    plugin.lambda = fakeLambda(() => {
      calls++;
      return Promise.reject(new Error('boom'));
    });
    await expect(plugin.invokeSubscriber('nodeTaints', entry)).resolves.toBeUndefined();
    expect(calls).toBe(3); // Lambda's default: 2 retries
    calls = 0;
    await plugin.invokeSubscriber('podProcessing', entry);
    expect(calls).toBe(1);
    expect(notices.some((n) => n.includes('dead-letter queue'))).toBe(true);
  });

  it('hands every invocation the same event id across retries', async () => {
    const plugin = newPlugin({ nodeTaints: {} });
    const ids: unknown[] = [];
    plugin.lambda = fakeLambda((event) => {
      ids.push((event as { id: unknown }).id);
      return ids.length < 2 ? Promise.reject(new Error('once')) : Promise.resolve();
    });
    await plugin.invokeSubscriber('nodeTaints', entry);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toBe(ids[1]);
  });
});

describe('offline-eventbridge: the PutEvents endpoint', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => {
      if (server === undefined) resolve(undefined);
      else server.close(resolve);
    });
    server = undefined;
  });

  it('answers the EventBridge client once, accepting every entry, and publishes them to the broker', async () => {
    const plugin = newPlugin();
    const published: string[] = [];
    plugin.mqClient = { publish: (_topic: string, message: string) => published.push(message) };
    server = createServer((request, response) => {
      plugin.putEvents(request, response);
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = new EventBridgeClient({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const out = await client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: Bus,
            Source: RelaySource,
            DetailType: NodeChangedDetailType,
            Detail: '{"cluster":"default"}',
          },
          {
            EventBusName: Bus,
            Source: RelaySource,
            DetailType: PodChangedDetailType,
            Detail: '{"cluster":"default"}',
          },
        ],
      }),
    );
    client.destroy();
    expect(out.FailedEntryCount).toBe(0);
    expect(out.Entries).toHaveLength(2);
    expect(out.Entries?.every((e) => typeof e.EventId === 'string' && e.ErrorCode === undefined)).toBe(true);
    expect(published).toHaveLength(1);
    expect((JSON.parse(published[0] ?? '[]') as Entry[]).map((e) => e.DetailType)).toEqual([
      NodeChangedDetailType,
      PodChangedDetailType,
    ]);
  });
});

describe('offline-eventbridge: local wiring for `osls offline`', () => {
  it('gives every function the local endpoints, and the Lambda endpoint only to the drainer caller', () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      NLC_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      NLC_KUBECONFIG: '/tmp/controller.kubeconfig',
      NLC_LAMBDA_ENDPOINT: 'http://127.0.0.1:3002',
      NLC_OFFLINE_EVENTBRIDGE_PORT: '4510',
      NLC_OFFLINE_PUBSUB_PORT: '4511',
      NLC_OFFLINE_WORK_FOLDER: '.nlc-data/esbuild',
    });
    try {
      const functions: Record<string, FunctionDefinition> = {
        monitorNodeHealth: { environment: { NLC_EVICTION_DRAINER_FUNCTION: 'nlc-dev-evictionDrainer' } },
        nodeTaints: {},
      };
      const serverless = serverlessStub(functions, ['offline', 'start'], {
        esbuild: { minify: true },
        'serverless-offline-aws-eventbridge': { mockEventBridgeServer: true, hostname: '127.0.0.1' },
      });
      new Plugin(serverless, {}, { log: { notice: () => undefined } });
      expect(serverless.service.provider.environment).toMatchObject({
        NLC_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
        NLC_KUBECONFIG: '/tmp/controller.kubeconfig',
      });
      expect(serverless.service.provider.environment.NLC_LAMBDA_ENDPOINT).toBeUndefined();
      expect(functions.monitorNodeHealth?.environment?.NLC_LAMBDA_ENDPOINT).toBe('http://127.0.0.1:3002');
      expect(functions.nodeTaints?.environment).toBeUndefined();
      expect(serverless.service.custom).toMatchObject({
        esbuild: { minify: true, outputWorkFolder: '.nlc-data/esbuild' },
        'serverless-offline-aws-eventbridge': { port: 4510, pubSubPort: 4511, hostname: '127.0.0.1' },
      });
    } finally {
      for (const key of Object.keys(process.env))
        if (!(key in saved)) Reflect.deleteProperty(process.env, key);
    }
  });

  it("stops esbuild's service once the bundles are written, and after each rebuild of a watched change", async () => {
    const serverless = serverlessStub({ nodeTaints: {} }, ['offline', 'start']);
    const plugin = new Plugin(serverless, {}, { log: { notice: () => undefined } }) as PluginInstance & {
      hooks: Record<string, () => Promise<unknown>>;
      start(): Promise<void>;
      bundler(): { stop(): Promise<void> };
    };
    const order: string[] = [];
    plugin.bundler = () => ({
      stop: () => {
        order.push('stop esbuild');
        return Promise.resolve();
      },
    });
    plugin.start = () => {
      order.push('start');
      return Promise.resolve();
    };
    await plugin.hooks['before:offline:start:init']?.();
    await plugin.hooks['offline:functionsUpdated:cleanup']?.();
    expect(order).toEqual(['stop esbuild', 'start', 'stop esbuild']);
  });

  it('resolves the esbuild serverless-esbuild bundles with, which builds again after stop()', async () => {
    const plugin = new Plugin(
      serverlessStub({}, ['offline', 'start']),
      {},
      {
        log: { notice: () => undefined },
      },
    ) as PluginInstance & {
      bundler(): { stop(): Promise<void>; transform(code: string): Promise<{ code: string }> };
    };
    const fromPlugin = createRequire(createRequire(import.meta.url).resolve('serverless-esbuild'));
    expect(plugin.bundler()).toBe(fromPlugin(fromPlugin.resolve('esbuild')));
    await plugin.bundler().transform('let a = 1');
    await plugin.bundler().stop();
    // A watched change after the stop: esbuild starts a new service process for it.
    expect((await plugin.bundler().transform('let a = 1')).code).toBe('let a = 1;\n');
    await plugin.bundler().stop();
  });

  it('changes nothing for other commands (package, deploy)', () => {
    const saved = process.env.NLC_DYNAMODB_ENDPOINT;
    process.env.NLC_DYNAMODB_ENDPOINT = 'http://127.0.0.1:8000';
    try {
      const serverless = serverlessStub({ nodeTaints: {} }, ['package']);
      new Plugin(serverless, {}, { log: { notice: () => undefined } });
      expect(serverless.service.provider.environment).toEqual({ NODE_OPTIONS: '--enable-source-maps' });
    } finally {
      if (saved === undefined) delete process.env.NLC_DYNAMODB_ENDPOINT;
      else process.env.NLC_DYNAMODB_ENDPOINT = saved;
    }
  });
});
