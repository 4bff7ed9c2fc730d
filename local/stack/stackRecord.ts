// Where a running local stack can be found: `stack.json` in its data directory, written once the stack
// is up and removed when it stops. `nlc status | explain | queue` read it to use the stack with no
// flags, as kubectl uses the current context. A record whose process is gone (the stack was killed) is
// stale and ignored. The file is for tools and people; nothing else depends on it.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** The record's file name in the data directory. */
export const StackRecordFile = 'stack.json';

const Url = z.url({ protocol: /^https?$/ });
/** A stage's five table names. */
const Tables = z.object({
  nodes: z.string().min(1),
  zones: z.string().min(1),
  evictionQueue: z.string().min(1),
  podEvictions: z.string().min(1),
  decisions: z.string().min(1),
});

export const StackRecordSchema = z.object({
  /** The stack's process: the record is stale once it is gone. */
  pid: z.number().int().positive(),
  startedAt: z.iso.datetime(),
  cluster: z.string().min(1),
  /** serverless.yml's stage the stack runs (its tables and bus are named after it). */
  stage: z.string().min(1),
  /** The region the SDK clients sign for (any: the local servers check no signature). */
  region: z.string().min(1),
  tables: Tables,
  endpoints: z.object({
    dynamodb: Url,
    eventBridge: Url,
    lambda: Url,
    relay: Url,
    apiServer: Url.optional(),
  }),
  /** The admin kubeconfig (the simulator's) or the one given. */
  kubeconfig: z.string().min(1),
  /** The second, active controller (--managed-controller); the stack's own then runs in shadow mode. */
  managed: z
    .object({
      stage: z.string().min(1),
      tables: Tables,
      endpoints: z.object({ eventBridge: Url, lambda: Url, relay: Url }),
    })
    .optional(),
});
export type StackRecord = z.output<typeof StackRecordSchema>;

/** Writes the record (whole or not at all: a reader never sees half a file). */
export async function writeStackRecord(dataDir: string, record: StackRecord): Promise<void> {
  const path = join(dataDir, StackRecordFile);
  const partial = `${path}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify(record, null, 2)}\n`);
  await rename(partial, path);
}

export async function removeStackRecord(dataDir: string): Promise<void> {
  await rm(join(dataDir, StackRecordFile), { force: true });
}

/** Whether a process with this pid exists (EPERM: it does, under another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a data directory says about a local stack. */
export type StackLookup =
  | { readonly state: 'running'; readonly record: StackRecord; readonly path: string }
  | { readonly state: 'stale'; readonly pid: number; readonly path: string }
  | { readonly state: 'unreadable'; readonly problem: string; readonly path: string }
  | { readonly state: 'none'; readonly path: string };

/**
 * Reads the record in `dataDir`: running (its process is alive), stale (it is not), unreadable (not a
 * record), or none.
 *
 * @example
 * const found = await findStack('.nlc-data');
 * if (found.state === 'running') console.log(found.record.endpoints.dynamodb);
 */
export async function findStack(dataDir: string): Promise<StackLookup> {
  const path = join(dataDir, StackRecordFile);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return { state: 'none', path };
  }
  let parsed: z.ZodSafeParseResult<StackRecord>;
  try {
    parsed = StackRecordSchema.safeParse(JSON.parse(text));
  } catch (error) {
    return { state: 'unreadable', problem: error instanceof Error ? error.message : String(error), path };
  }
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join('.') ?? '';
    return { state: 'unreadable', problem: `${field || '(record)'}: ${issue?.message ?? 'invalid'}`, path };
  }
  const record = parsed.data;
  return processAlive(record.pid)
    ? { state: 'running', record, path }
    : { state: 'stale', pid: record.pid, path };
}
