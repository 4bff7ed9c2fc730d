// Shared by the `nlc simulate` example tests: run an example from examples/scenarios/ in process, and
// write timeline lines compactly so a test can compare them with the lines its comments derive.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { parseScenario } from '../../../local/simulate/scenario.js';
import { runSimulation, type SimulationResult } from '../../../local/simulate/simulation.js';
import type { TimelineKind, TimelineLine } from '../../../local/simulate/timeline.js';

export const examplesDir = new URL('../../../examples/scenarios/', import.meta.url);

export interface RunExampleOptions {
  /**
   * Settings laid over the example's `config:` (e.g. `{ emulationVersion: '1.33' }`), validated as the
   * scenario's own would be.
   */
  readonly config?: Readonly<Record<string, unknown>>;
}

/** Runs examples/scenarios/<name>.yaml, its `config:` overridden by `options.config` if given. */
export async function runExample(name: string, options: RunExampleOptions = {}): Promise<SimulationResult> {
  const file = new URL(`${name}.yaml`, examplesDir);
  let text = await readFile(file, 'utf8');
  if (options.config !== undefined) {
    const document = parseYaml(text) as Record<string, unknown>;
    const config = (document.config ?? {}) as Record<string, unknown>;
    text = stringifyYaml({ ...document, config: { ...config, ...options.config } });
  }
  return runSimulation(parseScenario(text, `${name}.yaml`));
}

/** Upstream's monitor passes run every nodeMonitorPeriod (5 s) from t = 0. */
export const monitorPeriod = 5;

/** The first monitor pass strictly after `t` seconds (tryUpdateNodeHealth: now.After(probe + grace)). */
export function firstPassAfter(t: number, period = monitorPeriod): number {
  return (Math.floor(t / period) + 1) * period;
}

/** The last kubelet lease renewal at or before `t` seconds (renewals every 10 s from t = 0). */
export function lastRenewalAtOrBefore(t: number): number {
  return Math.floor(t / 10) * 10;
}

const short = (key: string): string => key.replace(/^node\.kubernetes\.io\//, '');

/**
 * One line, compactly: `85 NodeCondition a-1 Ready=Unknown`, `85 TaintAdded a-1 unreachable:NoExecute`,
 * `385 PodDeleted default/web-1 TaintManagerEviction`, `0 ZoneState region-1:zone-a Initial→Normal`,
 * `85 Event NodeNotReady Node/a-1`, `300 Event TaintManagerEviction Pod/default/web-1 Cancelling`.
 */
export function describeLine(line: TimelineLine): string {
  switch (line.kind) {
    case 'NodeCondition':
      return `${line.t} NodeCondition ${line.node} ${line.type}=${line.status}`;
    case 'TaintAdded':
    case 'TaintRemoved':
      return `${line.t} ${line.kind} ${line.node} ${short(line.key)}:${line.effect}`;
    case 'PodNotReady':
      return `${line.t} PodNotReady ${line.pod}`;
    case 'PodDeleted':
      return `${line.t} PodDeleted ${line.pod} ${line.reason}`;
    case 'ZoneState':
      return `${line.t} ZoneState ${line.zone} ${line.from}→${line.to}`;
    case 'Event': {
      const verb = line.reason === 'TaintManagerEviction' ? ` ${line.message.split(' ')[0] ?? ''}` : '';
      return `${line.t} Event ${line.reason} ${line.object}${verb}`;
    }
    case 'Summary':
      return `${line.t} Summary`;
  }
}

/** The lines of the given kinds, described. */
export function linesOf(result: SimulationResult, ...kinds: TimelineKind[]): string[] {
  return result.lines.filter((l) => kinds.includes(l.kind)).map(describeLine);
}

/** The lines of a kind that satisfy `where`, described. */
export function linesWhere(result: SimulationResult, where: (line: TimelineLine) => boolean): string[] {
  return result.lines.filter(where).map(describeLine);
}

/** The Summary line. */
export function summaryOf(result: SimulationResult): Extract<TimelineLine, { kind: 'Summary' }> {
  const last = result.lines.at(-1);
  if (last?.kind !== 'Summary') throw new Error('the last line is not the Summary');
  return last;
}

/** Failed function invocations (a run that should have none). */
export function failures(result: SimulationResult): string[] {
  return result.diagnostics.filter((d) => d.level === 'error').map((d) => `${d.t} ${d.source}: ${d.message}`);
}
