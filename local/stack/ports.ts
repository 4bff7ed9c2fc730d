// The local stack's ports, all on 127.0.0.1: what each is for, its default, the flag that moves it, and a
// check before anything starts, so a taken port is reported by name instead of as an EADDRINUSE from deep
// inside a child process. Port 0 picks a free port: the in-process servers listen on 0 themselves; the
// ports serverless-offline needs are chosen here (listen on 0, read the port, close) and passed to it.
import { createServer, type AddressInfo } from 'node:net';
import { NlcError, PortInUseError } from '../../shared/errors.js';

/** Every address the stack binds: loopback only, nothing reachable from beyond the machine. */
export const LocalHost = '127.0.0.1';

export interface StackPorts {
  /** The Kubernetes API simulator (https); unused with a real cluster. */
  readonly apiServer: number;
  /** The DynamoDB-compatible server (dynalite). */
  readonly dynamodb: number;
  /** The EventBridge PutEvents endpoint the relay publishes to (serverless-offline-aws-eventbridge). */
  readonly eventBridge: number;
  /** That endpoint's internal MQTT broker (between the endpoint and the rule matching). */
  readonly eventBridgePubSub: number;
  /** serverless-offline's Lambda Invoke endpoint (the monitor starts the drainer through it). */
  readonly lambda: number;
  /** The relay's /healthz, /readyz and /metrics. */
  readonly relay: number;
}

export type PortName = keyof StackPorts;

/** What each port is for and the flag that sets it (messages, --help, docs/local.md). */
export const PortInfo: { readonly [K in PortName]: { readonly purpose: string; readonly flag: string } } = {
  apiServer: { purpose: 'the Kubernetes API simulator', flag: '--port-apiserver' },
  dynamodb: { purpose: 'the DynamoDB-compatible server', flag: '--port-dynamodb' },
  eventBridge: { purpose: 'the EventBridge endpoint of serverless-offline', flag: '--port-eventbridge' },
  eventBridgePubSub: {
    purpose: "the EventBridge endpoint's MQTT broker",
    flag: '--port-eventbridge-pubsub',
  },
  lambda: { purpose: "serverless-offline's Lambda endpoint", flag: '--port-lambda' },
  relay: { purpose: "the relay's health and metrics endpoint", flag: '--port-relay' },
};

/**
 * The defaults: DynamoDB Local's 8000 (so `nlc status --endpoint http://127.0.0.1:8000` finds it), the
 * serverless-offline plugins' own 3002, 4010 and 4011, and two ports unlikely to be in use for the rest.
 */
export const DefaultPorts: StackPorts = Object.freeze({
  apiServer: 16443,
  dynamodb: 8000,
  eventBridge: 4010,
  eventBridgePubSub: 4011,
  lambda: 3002,
  relay: 18080,
});

export const PortNames = Object.keys(DefaultPorts) as readonly PortName[];

/** Every port 0: each part picks a free one (tests; the second controller of --managed-controller). */
export const AnyPorts: StackPorts = Object.freeze({
  apiServer: 0,
  dynamodb: 0,
  eventBridge: 0,
  eventBridgePubSub: 0,
  lambda: 0,
  relay: 0,
});

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host: LocalHost, exclusive: true }, () => {
      const { port: bound } = server.address() as AddressInfo;
      server.close(() => {
        resolve(bound);
      });
    });
  });
}

/**
 * Several of the stack's ports are taken (most likely by another local stack): every one is named, so a
 * second start does not fail port by port.
 */
export class PortsInUseError extends NlcError {
  readonly ports: readonly PortInUseError[];

  constructor(ports: readonly PortInUseError[]) {
    super(
      [
        `${ports.length} ports on ${LocalHost} are already in use (another local stack?): stop what holds them, or choose other ports (0 picks a free one):`,
        ...ports.map((p) => `- port ${p.port} (${p.purpose}): ${p.flag} <port>`),
      ].join('\n'),
    );
    this.ports = ports;
  }
}

/**
 * Checks every fixed port is free, and picks a free port for each 0 among `pick` (the ports a child
 * process needs as numbers). Throws PortInUseError for a taken port, naming it, or PortsInUseError
 * naming every one when several are. A picked port is never one of `avoid`. Another process can still take a port between this check and the
 * bind; the bind then fails with the same message.
 *
 * @example
 * const ports = await reservePorts({ ...DefaultPorts, apiServer: 0 }, ['eventBridge', 'lambda']);
 */
export async function reservePorts(
  ports: StackPorts,
  pick: readonly PortName[],
  skip: readonly PortName[] = [],
  avoid: readonly number[] = [],
): Promise<StackPorts> {
  const chosen: Record<PortName, number> = { ...ports };
  // `avoid`: ports already chosen for another part (checked and closed, so the OS may offer them again).
  const taken = new Set<number>(avoid);
  const inUse: PortInUseError[] = [];
  for (const name of PortNames) {
    if (skip.includes(name)) continue;
    const wanted = ports[name];
    if (wanted === 0 && !pick.includes(name)) continue;
    if (wanted !== 0 && taken.has(wanted)) {
      throw new PortInUseError(
        wanted,
        `${PortInfo[name].purpose}, also given to another part`,
        PortInfo[name].flag,
      );
    }
    let bound: number;
    try {
      // A picked port must differ from every other: the OS may hand the same free port out twice.
      do bound = await listenOnce(wanted);
      while (wanted === 0 && taken.has(bound));
    } catch (error) {
      const explained = explainListenError(error, name, wanted);
      if (!(explained instanceof PortInUseError)) throw explained;
      inUse.push(explained);
      bound = wanted;
    }
    taken.add(bound);
    chosen[name] = bound;
  }
  const [first, ...more] = inUse;
  if (first !== undefined) throw more.length === 0 ? first : new PortsInUseError(inUse);
  return chosen;
}

/** Wraps a server's listen error: EADDRINUSE becomes the PortInUseError for that port. */
export function explainListenError(error: unknown, name: PortName, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    return new PortInUseError(port, PortInfo[name].purpose, PortInfo[name].flag, { cause: error });
  }
  if (code === 'EACCES') {
    return new RangeError(
      `port ${port} (${PortInfo[name].purpose}) needs privileges this process lacks: choose a port above 1023 with ${PortInfo[name].flag}`,
      { cause: error },
    );
  }
  return error;
}
