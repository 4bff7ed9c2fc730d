// osls plugin for `osls offline start` (the local stack, docs/local.md): serverless-offline-aws-eventbridge
// with what this service needs of it fixed, plus the local wiring of the functions. Listed in
// serverless.yml in place of the upstream plugin; every hook is an `offline` hook, so package and deploy
// never run any of it.
//
// The upstream plugin (2.2.4) runs a mock PutEvents endpoint, matches the rules in serverless.yml and
// invokes the functions through serverless-offline. Where it differs from EventBridge in a way this
// service can see, this subclass does what EventBridge does (test/unit/infra/offlineEventBridge.test.ts):
// - Schedules: the event is EventBridge's `{ source: "aws.events", "detail-type": "Scheduled Event",
//   detail: {}, resources: [<rule ARN>] }`; upstream sends `source: "Scheduled function X"` with no
//   detail-type, which the monitor's and the drainer's parsers rightly reject.
// - Matching: a field the pattern names must be present in the event. Upstream skips the detail-type and
//   detail checks when the entry lacks them and compares bus names as substrings; here an entry without
//   them matches nothing, the bus name must be equal, and an entry naming no bus goes to the default bus.
// - Event ids are UUIDs, and `time` is the entry's Time when it has one.
// - Invocations: at most `reservedConcurrency` at a time per function when it has one, and a few
//   otherwise (see DEFAULT_LOCAL_CONCURRENCY; the monitor's passes of one cluster are serialized by
//   its pass lease, docs/deploy.md);
//   a failed asynchronous invocation is retried the function's
//   `maximumRetryAttempts` times (2 by default, as Lambda does), then logged as what would go to the
//   dead-letter queue. Nothing is thrown out of an invocation: upstream rethrows into an MQTT callback or
//   a cron tick, an unhandled rejection that ends the whole emulator.
// - The mock endpoint and its MQTT broker listen on `hostname` only (upstream: every interface), and a
//   PutEvents request gets one well-formed answer (EventBridge's `FailedEntryCount`/`Entries`).
//
// Local wiring, read from the environment of the osls process (the local stack sets it, local/stack/):
//   NLC_DYNAMODB_ENDPOINT        every function's DynamoDB endpoint (the local DynamoDB-compatible server)
//   NLC_KUBECONFIG               every function's cluster credentials (a kubeconfig file)
//   NLC_LAMBDA_ENDPOINT          where the monitor invokes the drainer (serverless-offline's lambda port);
//                                given to the functions that have NLC_EVICTION_DRAINER_FUNCTION only
//   NLC_OFFLINE_EVENTBRIDGE_PORT, NLC_OFFLINE_PUBSUB_PORT   the mock endpoint's and its broker's ports
//   NLC_OFFLINE_MAX_CONCURRENCY  invocations of a function at a time without reservedConcurrency (2)
//   NLC_OFFLINE_WORK_FOLDER      serverless-esbuild's work folder (relative to the service), so a local
//                                stack never shares `.esbuild/` with a concurrent `osls package`
//   NLC_OFFLINE_PARENT_PID       exit when this process is gone (no emulator outlives its local stack)
// The functions get only what serverless.yml gives them plus these, as in AWS (no --localEnvironment).
'use strict';
/* global process, setTimeout, setInterval, clearInterval, Buffer */

const { randomUUID } = require('node:crypto');
const { createServer } = require('node:http');
const { createRequire } = require('node:module');
const { availableParallelism } = require('node:os');

const upstreamPath = require.resolve('serverless-offline-aws-eventbridge');
const ServerlessOfflineAwsEventBridgePlugin = require(upstreamPath);
// The upstream plugin's own dependencies, resolved where it resolves them.
const upstreamRequire = createRequire(upstreamPath);
const cron = upstreamRequire('node-cron');
const mqtt = upstreamRequire('mqtt');
const Aedes = upstreamRequire('aedes');

/** Lambda's default for asynchronous invocations. */
const DEFAULT_MAXIMUM_RETRY_ATTEMPTS = 2;
/**
 * Invocations of one function at a time when serverless.yml reserves none. Each is a worker thread that
 * loads the function's bundle: a burst of events (the relay's first list: an event per node and pod)
 * would otherwise start hundreds at once and stall the machine. Events wait their turn instead, as
 * throttled asynchronous invocations do in Lambda.
 */
const DEFAULT_LOCAL_CONCURRENCY = 2;
const LOCAL_ENV_ALL = ['NLC_DYNAMODB_ENDPOINT', 'NLC_KUBECONFIG'];
const LOCAL_ENV_DRAINER_CALLER = 'NLC_LAMBDA_ENDPOINT';
const DRAINER_FUNCTION_VAR = 'NLC_EVICTION_DRAINER_FUNCTION';

function envValue(name) {
  const value = process.env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function portFromEnv(name) {
  const value = envValue(name);
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(`${name}: expected a port from 1 to 65535, got ${JSON.stringify(value)}`);
  }
  return port;
}

/** A counting semaphore: at most `limit` holders, the rest wait in order. */
class Slots {
  constructor(limit) {
    this.limit = limit;
    this.active = 0;
    this.waiting = [];
  }

  acquire() {
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release() {
    const next = this.waiting.shift();
    if (next === undefined) this.active--;
    else next();
  }
}

class NlcOfflineEventBridge extends ServerlessOfflineAwsEventBridgePlugin {
  constructor(serverless, options, logging) {
    super(serverless, options, logging);
    this.functionSlots = new Map();
    this.scheduledTasks = [];
    const command = serverless.processedInput?.commands?.[0];
    if (command === 'offline') this.wireLocally();
  }

  /** Applies the environment's local wiring to the service before any offline hook reads it. */
  wireLocally() {
    const { service } = this.serverless;
    service.custom = service.custom ?? {};
    const workFolder = envValue('NLC_OFFLINE_WORK_FOLDER');
    if (workFolder !== undefined) {
      // Only the handlers' sources need watching for a rebuild, not the whole repository.
      service.custom.esbuild = {
        ...service.custom.esbuild,
        outputWorkFolder: workFolder,
        watch: { pattern: ['functions/**/*.ts', 'shared/**/*.ts'], ignore: ['node_modules'] },
        // No incremental contexts kept for the watch: they hold the whole module graph in esbuild's
        // service process for as long as the stack runs. A change rebuilds from scratch instead.
        skipRebuild: true,
        // Bundles built a few at a time: each build peaks at about 0.7 GB in esbuild (minified, with a
        // source map), and all five at once took 3.4 GB, and longer than one after another, on 2 cores.
        concurrency: Math.max(1, Math.min(5, Math.floor(availableParallelism() / 2))),
      };
    }
    const eventBridge = { ...service.custom['serverless-offline-aws-eventbridge'] };
    const port = portFromEnv('NLC_OFFLINE_EVENTBRIDGE_PORT');
    const pubSubPort = portFromEnv('NLC_OFFLINE_PUBSUB_PORT');
    if (port !== undefined) eventBridge.port = port;
    if (pubSubPort !== undefined) eventBridge.pubSubPort = pubSubPort;
    service.custom['serverless-offline-aws-eventbridge'] = eventBridge;

    const shared = {};
    for (const name of LOCAL_ENV_ALL) {
      const value = envValue(name);
      if (value !== undefined) shared[name] = value;
    }
    service.provider.environment = { ...service.provider.environment, ...shared };
    const lambdaEndpoint = envValue(LOCAL_ENV_DRAINER_CALLER);
    if (lambdaEndpoint !== undefined) {
      for (const name of service.getAllFunctions()) {
        const fn = service.getFunction(name);
        if (fn.environment?.[DRAINER_FUNCTION_VAR] !== undefined) {
          fn.environment = { ...fn.environment, [LOCAL_ENV_DRAINER_CALLER]: lambdaEndpoint };
        }
      }
    }

    // esbuild's service process stays after bundling, holding the 0.6 GB its builds peaked at (Go keeps
    // its heap) for as long as the stack runs, and nothing bundles again until a watched file changes.
    // Stopping it once the bundles are written frees that; esbuild starts a new one for the next build.
    // serverless-esbuild's hooks for these events run before this plugin's (serverless.yml's order).
    for (const hook of ['before:offline:start', 'before:offline:start:init']) {
      const run = this.hooks[hook];
      this.hooks[hook] = async () => {
        await this.releaseBundler();
        return run();
      };
    }
    // After each rebuild of a watched change (serverless-esbuild then spawns offline:functionsUpdated).
    this.hooks['offline:functionsUpdated:cleanup'] = () => this.releaseBundler();

    const parentPid = Number(envValue('NLC_OFFLINE_PARENT_PID'));
    if (Number.isInteger(parentPid) && parentPid > 0) {
      // The local stack runs this process in its own process group and stops it; if the stack itself
      // dies (SIGKILL, a crash), nobody would. Polling is the portable way to notice.
      const watch = setInterval(() => {
        try {
          process.kill(parentPid, 0);
        } catch {
          clearInterval(watch);
          this.logNotice(`parent process ${parentPid} is gone: exiting`);
          process.exit(0);
        }
      }, 1000);
      watch.unref();
    }
  }

  /** The esbuild module serverless-esbuild bundles with (the same instance: one service process). */
  bundler() {
    const fromPlugin = createRequire(require.resolve('serverless-esbuild'));
    return fromPlugin(fromPlugin.resolve('esbuild'));
  }

  /** Stops esbuild's service process, if one runs (a later build starts another). */
  async releaseBundler() {
    try {
      await this.bundler().stop();
    } catch (error) {
      // Memory only: a stack whose bundler cannot be stopped still works.
      this.logNotice(
        `could not stop esbuild's service: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  // --- servers on `hostname` only ----------------------------------------------------------------

  async start() {
    // serverless-offline starts an asynchronous Lambda invoke (the monitor starting the drainer) without
    // awaiting it; in Lambda a failed one is retried and dead-lettered, it never takes the service down.
    process.on('unhandledRejection', (error) => {
      this.logNotice(
        `an asynchronous invocation failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    await this.init();
    const config = this.config?.eventBridgeMockServerConfig;
    if (this.config?.localStackConfig.localStackEnabled || !config?.shouldMockEventBridgeServer) return;
    const host = config.mockMqttClientHostname;
    // Accept events only once the rule matching listens to the broker: an event published before that
    // would be dropped by the broker, and the relay's first list would never reach the functions.
    await this.subscribed;
    this.eventBridgeServer = createServer((request, response) => this.putEvents(request, response));
    await new Promise((resolve, reject) => {
      this.eventBridgeServer.once('error', reject);
      this.eventBridgeServer.listen(config.mockServerPort, host, resolve);
    });
    this.logNotice(`Mock server running at http://${host}:${config.mockServerPort}`);
  }

  async stop() {
    for (const task of this.scheduledTasks) task.stop();
    this.mqClient?.end(true);
    this.eventBridgeServer?.closeAllConnections?.();
    this.eventBridgeServer?.close();
    this.mqServer?.close();
    if (this.lambda) await this.lambda.cleanup();
  }

  // The express app upstream builds is replaced by `putEvents` (served by the server `start` makes).
  setupExpressApp() {}

  setupMqBroker() {
    const config = this.config?.eventBridgeMockServerConfig;
    if (!config?.shouldMockEventBridgeServer) return;
    this.mqServer = require('node:net').createServer(Aedes().handle);
    this.mqServer.listen(config.mockMqttClientPubSubPort, config.mockMqttClientHostname);
  }

  setupMqClient() {
    const config = this.config?.eventBridgeMockServerConfig;
    this.mqClient = mqtt.connect(
      `mqtt://${config.mockMqttClientHostname}:${config.mockMqttClientPubSubPort}`,
    );
    this.subscribed = new Promise((resolve) => {
      this.mqClient.on('connect', () => {
        this.mqClient.subscribe('eventBridge', (_error, granted) => {
          // Already subscribed (a reconnect): the message handler is in place.
          if (!granted || granted.length === 0) return;
          this.mqClient.on('message', (_topic, message) => {
            const entries = JSON.parse(message.toString());
            void Promise.all(this.invokeSubscribers(entries));
          });
          resolve();
        });
      });
    });
  }

  /** PutEvents: every entry accepted (and published to the broker), one answer. */
  putEvents(request, response) {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      let entries;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        entries = Array.isArray(body.Entries) ? body.Entries : [];
      } catch {
        response.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
        response.end(JSON.stringify({ __type: 'ValidationException', message: 'request body is not JSON' }));
        return;
      }
      this.mqClient?.publish('eventBridge', JSON.stringify(entries));
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify(this.generateEventBridgeResponse(entries)));
    });
  }

  generateEventBridgeResponse(entries) {
    return { Entries: entries.map(() => ({ EventId: randomUUID() })), FailedEntryCount: 0 };
  }

  // --- schedules ----------------------------------------------------------------------------------

  setupScheduledEvents() {
    for (const { schedule, event, functionKey } of this.scheduledEvents) {
      const entry = this.scheduledEntry(functionKey, event);
      const task = cron.schedule(schedule, () => {
        this.logDebug(`run scheduled function ${functionKey}`);
        void this.invokeSubscriber(functionKey, entry, event?.input);
      });
      this.scheduledTasks.push(task);
    }
  }

  /** The PutEvents-style entry of a schedule rule's event (EventBridge's "Scheduled Event"). */
  scheduledEntry(functionKey, event) {
    const region = this.config?.awsConfig.region ?? 'us-east-1';
    const account = this.config?.awsConfig.accountId ?? '000000000000';
    const rule = event?.name ?? `${this.serverless.service.service}-${functionKey}-schedule`;
    return {
      Source: 'aws.events',
      DetailType: 'Scheduled Event',
      Detail: '{}',
      Resources: [`arn:aws:events:${region}:${account}:rule/${rule}`],
    };
  }

  convertEntryAndInputToEvent(entry, input) {
    const event = super.convertEntryAndInputToEvent(entry, input);
    event.id = randomUUID();
    if (typeof entry.Time === 'string' && !Number.isNaN(Date.parse(entry.Time))) {
      event.time = new Date(entry.Time).toISOString().replace(/\.\d{3}Z$/, 'Z');
    } else if (typeof entry.Time === 'number') {
      event.time = new Date(entry.Time * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    }
    return event;
  }

  // --- matching -----------------------------------------------------------------------------------

  verifyIsSubscribed(subscriber, entry) {
    const pattern = subscriber.event.pattern ?? {};
    // A field the pattern names must exist: EventBridge never matches a missing field against a value list.
    if ('source' in pattern && typeof entry.Source !== 'string') return false;
    if ('detail-type' in pattern && typeof entry.DetailType !== 'string') return false;
    if ('detail' in pattern && typeof entry.Detail !== 'string') return false;
    if (!this.sameBus(subscriber.event.eventBus, entry.EventBusName)) return false;
    // The bus is checked; upstream's own (substring) bus check is skipped for an entry without one.
    return super.verifyIsSubscribed(subscriber, { ...entry, EventBusName: undefined });
  }

  /** The rule's bus (its name, or a Ref/GetAtt of a bus in resources) is the entry's bus, exactly. */
  sameBus(ruleBus, entryBus) {
    const target = typeof entryBus === 'string' && entryBus !== '' ? entryBus : 'default';
    const name = (value) =>
      typeof value === 'string' ? value.replace(/^arn:[^:]+:events:[^:]*:\d*:event-bus\//, '') : value;
    if (ruleBus === undefined) return name(target) === 'default';
    if (typeof ruleBus === 'string') return name(ruleBus) === name(target);
    const logicalId = ruleBus.Ref ?? ruleBus['Fn::Ref'] ?? ruleBus['Fn::GetAtt']?.[0];
    if (logicalId !== undefined) return this.eventBuses[logicalId] === name(target);
    const imported = ruleBus['Fn::ImportValue'];
    if (imported !== undefined) {
      return this.config?.eventBridgeMockServerConfig.importedEventBuses?.[imported] === name(target);
    }
    return false;
  }

  // --- invocations --------------------------------------------------------------------------------

  slotsFor(functionKey) {
    let slots = this.functionSlots.get(functionKey);
    if (slots === undefined) {
      const reserved = this.serverless.service.getFunction(functionKey).reservedConcurrency;
      const local = Number(envValue('NLC_OFFLINE_MAX_CONCURRENCY') ?? DEFAULT_LOCAL_CONCURRENCY);
      slots = new Slots(typeof reserved === 'number' && reserved > 0 ? reserved : Math.max(1, local));
      this.functionSlots.set(functionKey, slots);
    }
    return slots;
  }

  /** One asynchronous invocation as Lambda makes it: throttled to the reserved concurrency, retried. */
  async invokeSubscriber(functionKey, entry, input) {
    if (!this.lambda) throw new Error('Lambda not present');
    const fn = this.serverless.service.getFunction(functionKey);
    const retries = fn.maximumRetryAttempts ?? DEFAULT_MAXIMUM_RETRY_ATTEMPTS;
    const delay = this.options.retryDelayMs ?? 500;
    const slots = this.slotsFor(functionKey);
    const event = this.convertEntryAndInputToEvent(entry, input);
    for (let attempt = 0; ; attempt++) {
      await slots.acquire();
      let failure;
      try {
        const lambdaFunction = this.lambda.get(functionKey);
        lambdaFunction.setEvent(event);
        await lambdaFunction.runHandler();
        this.logDebug(`${functionKey} processed event ${event.id}`);
        return;
      } catch (error) {
        failure = error;
      } finally {
        slots.release();
      }
      const message = failure instanceof Error ? failure.message : String(failure);
      if (attempt >= retries) {
        this.logNotice(
          `${functionKey} failed event ${event.id} (${event['detail-type'] ?? event.source}) ${attempt + 1} times, ` +
            `the last with: ${message}; in AWS it would go to the function's dead-letter queue`,
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

module.exports = NlcOfflineEventBridge;
