// relay/reflector.ts's watchdog: a watch that stays open and delivers nothing (no event, no BOOKMARK)
// for the stall timeout is abandoned, counted, logged, and replaced by a relist; deliveries keep it
// quiet; it ends with the reflector. On virtual time, over a fake watch and list.
import type { Watch } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Reflector, WatchStalledMessage, type ChangeSource } from '../../../relay/reflector.js';
import type { RelayLogger } from '../../../relay/logger.js';
import { VirtualScheduler } from '../../../local/virtualScheduler.js';
import type { Millis } from '../../../shared/domain/types.js';
import type { Scheduler } from '../../../shared/ports/scheduler.js';

const t0 = Date.parse('2026-01-01T00:00:00Z');

interface Item {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly resourceVersion: string };
  readonly value: number;
}

const item = (name: string, value: number, resourceVersion: string): Item => ({
  metadata: { name, resourceVersion },
  value,
});

interface OpenedWatch {
  readonly params: Readonly<Record<string, unknown>>;
  readonly send: (type: string, obj: unknown) => void;
  /** Ends the watch as client-node does (an error: a broken connection). */
  readonly end: (error?: unknown) => void;
  readonly controller: AbortController;
}

/** client-node's Watch.watch, recording each watch opened; a test delivers events through `send`. */
class FakeWatch implements Pick<Watch, 'watch'> {
  readonly opened: OpenedWatch[] = [];

  watch(
    _path: string,
    params: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const controller = new AbortController();
    this.opened.push({
      params,
      controller,
      send: (type, obj) => {
        if (!controller.signal.aborted) callback(type, obj);
      },
      end: (error) => {
        done(error ?? null);
      },
    });
    return Promise.resolve(controller);
  }

  get current(): OpenedWatch {
    const last = this.opened.at(-1);
    if (last === undefined) throw new Error('no watch opened');
    return last;
  }
}

class MemoryLogger implements RelayLogger {
  readonly lines: { level: string; message: string; fields: Readonly<Record<string, unknown>> }[] = [];
  debug = this.log('debug');
  info = this.log('info');
  warn = this.log('warn');
  error = this.log('error');

  private log(level: string) {
    return (message: string, fields: Readonly<Record<string, unknown>> = {}) => {
      this.lines.push({ level, message, fields });
    };
  }
}

interface Harness {
  readonly scheduler: VirtualScheduler;
  readonly watch: FakeWatch;
  readonly logger: MemoryLogger;
  readonly reflector: Reflector<Item>;
  /** What the next list returns. */
  listed: { items: Item[]; resourceVersion: string };
  lists: number;
  stalls: number;
  relists: number;
  readonly changes: string[];
}

let harness: Harness | undefined;

function start(
  options: {
    stallTimeoutMs?: Millis | ((cached: number) => Millis);
    scheduler?: (virtual: VirtualScheduler) => Scheduler;
    items?: Item[];
  } = {},
): Harness {
  const scheduler = new VirtualScheduler(t0);
  const watch = new FakeWatch();
  const logger = new MemoryLogger();
  const changes: string[] = [];
  const record = (what: string) => (obj: Item, source: ChangeSource) => {
    changes.push(`${what} ${obj.metadata.name}=${obj.value} (${source})`);
  };
  const h: Harness = {
    scheduler,
    watch,
    logger,
    listed: { items: options.items ?? [item('a', 1, '10')], resourceVersion: '10' },
    lists: 0,
    stalls: 0,
    relists: 0,
    changes,
    reflector: new Reflector<Item>({
      resource: 'leases',
      watch,
      watchPath: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
      list: () => {
        h.lists++;
        return Promise.resolve({ items: [...h.listed.items], resourceVersion: h.listed.resourceVersion });
      },
      read: (raw) => ({ ok: true, value: raw as Item }),
      handler: {
        add: record('add'),
        update: (_old, next, source) => {
          record('update')(next, source);
        },
        delete: record('delete'),
      },
      scheduler: options.scheduler?.(scheduler) ?? scheduler,
      logger,
      onStall: () => {
        h.stalls++;
      },
      onRelist: () => {
        h.relists++;
      },
      random: () => 0.5,
      ...(options.stallTimeoutMs !== undefined && { stallTimeoutMs: options.stallTimeoutMs }),
    }),
  };
  harness = h;
  return h;
}

beforeEach(() => {
  harness = undefined;
});

afterEach(() => {
  harness?.reflector.stop();
});

const at = (h: Harness, seconds: number) => h.scheduler.runUntil(t0 + seconds * 1000);

describe('the reflector watchdog', () => {
  it('abandons a watch silent for the stall timeout, counts and logs it, and relists', async () => {
    const h = start({ stallTimeoutMs: 20_000 });
    await h.reflector.start();
    expect(h.watch.opened).toHaveLength(1);
    const first = h.watch.current;

    await at(h, 19.999);
    expect(h.stalls).toBe(0);
    expect(h.reflector.status()).toMatchObject({ watching: true, interrupted: false, suspectedStall: false });

    h.listed = { items: [item('a', 2, '15')], resourceVersion: '15' };
    await at(h, 20);
    expect(h.stalls).toBe(1);
    expect(first.controller.signal.aborted).toBe(true);
    expect(h.lists).toBe(2);
    expect(h.relists).toBe(1);
    expect(h.logger.lines.filter((l) => l.level === 'warn')).toEqual([
      {
        level: 'warn',
        message: WatchStalledMessage,
        fields: { resource: 'leases', silentSeconds: 20, resourceVersion: '10' },
      },
    ]);
    // The relist is authoritative: what the stalled watch hid arrives as a change of the relist, and
    // the new watch starts from the relist's resourceVersion.
    expect(h.changes).toEqual(['add a=1 (initial)', 'update a=2 (relist)']);
    expect(h.watch.opened).toHaveLength(2);
    expect(h.watch.current.params.resourceVersion).toBe('15');
    expect(h.reflector.status()).toMatchObject({ watching: true, interrupted: false, suspectedStall: false });
  });

  it('takes a watch that stays silent after the relist for stalled again, one timeout later', async () => {
    const h = start({ stallTimeoutMs: 20_000 });
    await h.reflector.start();
    await at(h, 59);
    expect(h.stalls).toBe(2); // at 20 s and 40 s
    await at(h, 60);
    expect(h.stalls).toBe(3);
    expect(h.watch.opened.slice(0, -1).every((w) => w.controller.signal.aborted)).toBe(true);
  });

  it('never takes a watch delivering events or bookmarks for stalled, and counts silence from the last delivery', async () => {
    const h = start({ stallTimeoutMs: 20_000 });
    await h.reflector.start();
    const watch = h.watch.current;
    // A bookmark every 15 s, an event now and then: never 20 s of silence.
    for (let s = 15; s <= 120; s += 15) {
      h.scheduler.at(t0 + s * 1000, 0, () => {
        watch.send('BOOKMARK', { metadata: { resourceVersion: String(100 + s) } });
      });
    }
    h.scheduler.at(t0 + 50_000, 0, () => {
      watch.send('MODIFIED', item('a', 3, '140'));
    });
    await at(h, 139.999);
    expect(h.stalls).toBe(0);
    expect(h.watch.opened).toHaveLength(1);
    // The last bookmark came at 120 s: silent for 20 s at 140 s.
    await at(h, 140);
    expect(h.stalls).toBe(1);
    expect(h.logger.lines.find((l) => l.message === WatchStalledMessage)?.fields).toEqual({
      resource: 'leases',
      silentSeconds: 20,
      resourceVersion: '220',
    });
  });

  it('reports a watch silent for its stall timeout as a suspected stall before the watchdog acts', async () => {
    // The watchdog's own timer is late here (its scheduler delays it 3 s): meanwhile the status says it.
    const h = start({
      stallTimeoutMs: 20_000,
      scheduler: (virtual) => ({
        now: () => virtual.now(),
        at: (time, priority, fn) => virtual.at(time + 3_000, priority, fn),
        after: (delay, priority, fn) => virtual.after(delay, priority, fn),
        every: (period, firstAt, priority, fn) => virtual.every(period, firstAt, priority, fn),
        cancel: (handle) => {
          virtual.cancel(handle);
        },
      }),
    });
    await h.reflector.start();
    await at(h, 19.999);
    expect(h.reflector.status().suspectedStall).toBe(false);
    await at(h, 20);
    expect(h.reflector.status()).toMatchObject({ watching: true, suspectedStall: true });
    expect(h.stalls).toBe(0);
  });

  it('a watchdog timer that fires late looks again a second later, so unread events are not taken for silence', async () => {
    // The first watchdog timer fires 5 s late, as with an event loop blocked for 5 s; the event the
    // watch had waiting is read just after it (at 25.5 s). The watchdog must not call that a stall.
    let delayed = false;
    const h = start({
      stallTimeoutMs: 20_000,
      scheduler: (virtual) => ({
        now: () => virtual.now(),
        at: (time, priority, fn) => {
          const late = delayed ? 0 : 5_000;
          delayed = true;
          return virtual.at(time + late, priority, fn);
        },
        after: (delay, priority, fn) => virtual.after(delay, priority, fn),
        every: (period, firstAt, priority, fn) => virtual.every(period, firstAt, priority, fn),
        cancel: (handle) => {
          virtual.cancel(handle);
        },
      }),
    });
    await h.reflector.start();
    const watch = h.watch.current;
    h.scheduler.at(t0 + 25_500, 0, () => {
      watch.send('MODIFIED', item('a', 2, '11'));
    });
    await at(h, 30);
    expect(h.stalls).toBe(0);
    // From the event at 25.5 s, 20 s of silence again.
    await at(h, 45.499);
    expect(h.stalls).toBe(0);
    await at(h, 45.5);
    expect(h.stalls).toBe(1);
  });

  it('stops with the reflector: no stall, no relist, no timer left', async () => {
    const h = start({ stallTimeoutMs: 20_000 });
    await h.reflector.start();
    await at(h, 10);
    h.reflector.stop();
    expect(h.scheduler.pending).toBe(0);
    await at(h, 120);
    expect(h.stalls).toBe(0);
    expect(h.lists).toBe(1);
  });

  it('does not watch for stalls while a broken watch waits for its backoff', async () => {
    const h = start({ stallTimeoutMs: 20_000 });
    await h.reflector.start();
    // The watch breaks at 5 s; the backoff (0.8 s × 1.5 with this jitter) resumes it at 6.2 s.
    h.scheduler.at(t0 + 5_000, 0, () => {
      h.watch.current.end(new Error('connection reset'));
    });
    await at(h, 6.199);
    expect(h.reflector.status()).toMatchObject({ watching: false, interrupted: true, suspectedStall: false });
    await at(h, 6.2);
    expect(h.reflector.status()).toMatchObject({ watching: true, interrupted: false });
    // The resumed watch is silent from 6.2 s.
    await at(h, 26.199);
    expect(h.stalls).toBe(0);
    await at(h, 26.2);
    expect(h.stalls).toBe(1);
  });

  it('is off with a stall timeout of 0 or none', async () => {
    for (const stallTimeoutMs of [0, undefined]) {
      const h = start(stallTimeoutMs === undefined ? {} : { stallTimeoutMs });
      await h.reflector.start();
      await at(h, 3_600);
      expect(h.stalls).toBe(0);
      expect(h.watch.opened).toHaveLength(1);
      h.reflector.stop();
    }
  });

  it('takes the stall timeout for the objects cached: a quiet timeout while there are none', async () => {
    const h = start({ stallTimeoutMs: (cached) => (cached > 0 ? 20_000 : 180_000), items: [] });
    await h.reflector.start();
    await at(h, 179.999);
    expect(h.stalls).toBe(0);
    h.listed = { items: [item('a', 1, '20')], resourceVersion: '20' };
    await at(h, 180);
    expect(h.stalls).toBe(1);
    // Now with an object cached: 20 s.
    await at(h, 200);
    expect(h.stalls).toBe(2);
  });
});

describe('the reflector cache', () => {
  const inNamespace = (namespace: string, name: string, value: number): Item => ({
    metadata: { name, namespace, resourceVersion: '10' },
    value,
  });

  it('keeps objects of one name in two namespaces apart, and a relist deletes only the one gone', async () => {
    const h = start({
      stallTimeoutMs: 20_000,
      items: [inNamespace('a', 'web', 1), inNamespace('b', 'web', 1)],
    });
    await h.reflector.start();
    expect(h.reflector.status().objects).toBe(2);
    expect(h.reflector.get('web', 'a')?.value).toBe(1);

    h.listed = { items: [inNamespace('b', 'web', 2)], resourceVersion: '15' };
    await at(h, 20); // stalled: relists
    expect(h.changes).toEqual([
      'add web=1 (initial)',
      'add web=1 (initial)',
      'update web=2 (relist)',
      'delete web=1 (relist)',
    ]);
    expect(h.reflector.get('web', 'a')).toBeUndefined();
    expect(h.reflector.get('web', 'b')?.value).toBe(2);
    expect([...h.reflector.values()].map((i) => i.value)).toEqual([2]);
    expect(h.reflector.status().objects).toBe(1);
  });
});
