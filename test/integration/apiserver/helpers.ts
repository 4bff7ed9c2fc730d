// Shared set-up for the API simulator's integration tests: a server on 127.0.0.1 port 0, client-node
// API clients through its generated KubeConfig, a virtual clock, and helpers to read Status errors.
import { kubectlBinary } from '../../helpers/kubectlBinary.js';
import { execFile } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException, AppsV1Api, CoordinationV1Api, CoreV1Api, EventsV1Api } from '@kubernetes/client-node';
import type { Clock } from '../../../shared/ports/clock.js';
import {
  type ApiServerHandle,
  type StartApiServerOptions,
  startApiServer,
} from '../../../local/apiserver/index.js';
import type { Status } from '../../../local/apiserver/status.js';

/** A client-node model written as plain data: the shape of `T`, with every nested model plain too. */
export type Plain<T> = T extends Date
  ? T
  : T extends readonly (infer U)[]
    ? Plain<U>[]
    : T extends object
      ? { [K in keyof T]: Plain<T[K]> }
      : T;

/**
 * Passes plain data where client-node's API wants one of its model classes. client-node serializes
 * models field by field and never needs their prototype (its own examples pass object literals).
 */
export function model<T>(value: Plain<T>): T {
  return value as unknown as T;
}

/** A clock tests move by hand. */
export class VirtualClock implements Clock {
  constructor(private t: number = Date.parse('2025-01-01T00:00:00Z')) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface Sim {
  readonly api: ApiServerHandle;
  readonly clock: VirtualClock;
  readonly core: CoreV1Api;
  readonly coordination: CoordinationV1Api;
  readonly apps: AppsV1Api;
  readonly events: EventsV1Api;
}

export async function startSim(options: StartApiServerOptions = {}): Promise<Sim> {
  const clock = new VirtualClock();
  const api = await startApiServer({ clock, ...options });
  const kc = api.kubeConfig();
  return {
    api,
    clock,
    core: kc.makeApiClient(CoreV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    events: kc.makeApiClient(EventsV1Api),
  };
}

/** The Status a failed client-node call carried (ApiException.body is the response text). */
export async function statusOf(
  call: Promise<unknown>,
): Promise<Status & { headers: Record<string, string> }> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    // client-node drops the body of some answers (401): then only the code is known.
    const body: unknown =
      typeof error.body === 'string' ? JSON.parse(error.body) : (error.body ?? { code: error.code });
    return { ...(body as Status), headers: error.headers };
  }
  throw new Error('expected the call to fail');
}

export interface RawResponse {
  readonly code: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One HTTPS request to the simulator, trusting its certificate; `token` undefined sends none. */
export function rawRequest(
  api: ApiServerHandle,
  path: string,
  {
    method = 'GET',
    token,
    body,
    contentType,
  }: { method?: string; token?: string; body?: string; contentType?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (token !== undefined) headers.Authorization = `Bearer ${token}`;
    if (contentType !== undefined) headers['Content-Type'] = contentType;
    const req = httpsRequest(
      `${api.url}${path}`,
      { method, headers, ...(api.caPem !== undefined && { ca: api.caPem }) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          resolve({
            code: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Polls until `condition` holds (a generous bound: machines are shared and noisy). */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs kubectl (the machine's, or the npm registry's: test/helpers/kubectlBinary.ts) against the
 * simulator with its own kubeconfig, HOME and cache directory.
 */
export class Kubectl {
  private constructor(
    private readonly dir: string,
    private readonly kubeconfig: string,
    private readonly binary: string,
  ) {}

  static async create(api: ApiServerHandle): Promise<Kubectl> {
    const dir = await mkdtemp(join(tmpdir(), 'nlc-kubectl-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await api.writeKubeconfig(kubeconfig);
    return new Kubectl(dir, kubeconfig, await kubectlBinary());
  }

  get directory(): string {
    return this.dir;
  }

  run(...args: string[]): Promise<KubectlResult> {
    return new Promise((resolve) => {
      execFile(
        this.binary,
        ['--kubeconfig', this.kubeconfig, '--cache-dir', join(this.dir, 'cache'), ...args],
        { env: { ...process.env, HOME: this.dir, KUBECONFIG: this.kubeconfig }, timeout: 30_000 },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

export const readyCondition = (status: 'True' | 'False' | 'Unknown', at = '2025-01-01T00:00:00Z') => ({
  type: 'Ready',
  status,
  reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady',
  message: 'kubelet',
  lastHeartbeatTime: at,
  lastTransitionTime: at,
});
