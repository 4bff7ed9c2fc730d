// dynalite 4.0.0 reads a table (every Query and Scan, and ListTables) through a stream over an
// abstract-level iterator, and ends it with `iterator.return()` when the stream ends or is destroyed
// (dynalite/db/index.js createValueStream, createKeyStream). abstract-level's iterators have no
// `return()`: they end with `close()`. So none was ever closed: each stayed in its database's open
// resources until the database closed, and kept what it read alive — memory-level's tree as of that
// read (every item's value then, as Buffers), or classic-level's LevelDB iterator with its implicit
// snapshot. The local stack queries the Decisions table ~35 times a second (the view reads each
// subject's newest decisions every second): idle, its process grew ~21 MiB a minute with the tables on
// disk (npm start's default), and kept every Buffer it had read with them in memory.
//
// The fix gives abstract-level's iterators the `return()` of the async iterator protocol, which is
// what dynalite calls: it closes the iterator (after a read in flight, as close() does).
import { createRequire } from 'node:module';

/** The part of abstract-level's iterator classes this module touches. */
interface IteratorClass {
  readonly prototype: { close(): Promise<void> };
}

export interface AbstractLevelModule {
  /** The databases: their iterators attach themselves as open resources, and detach when closed. */
  readonly AbstractLevel: {
    readonly prototype: { attachResource(resource: object): void; detachResource(resource: object): void };
  };
  readonly AbstractIterator: IteratorClass;
  readonly AbstractKeyIterator: IteratorClass;
  readonly AbstractValueIterator: IteratorClass;
}

/**
 * The abstract-level modules dynalite's databases extend: memory-level's (in memory) and
 * classic-level's through `level` (on disk). One module when npm deduplicated them.
 */
export function dynaliteAbstractLevels(): AbstractLevelModule[] {
  const dynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const classic = createRequire(createRequire(dynalite.resolve('level')).resolve('classic-level'));
  const paths = new Set([
    createRequire(dynalite.resolve('memory-level')).resolve('abstract-level'),
    classic.resolve('abstract-level'),
  ]);
  return [...paths].map((path) => createRequire(import.meta.url)(path) as AbstractLevelModule);
}

async function returnCloses(
  this: { close(): Promise<void> },
  value?: unknown,
): Promise<IteratorReturnResult<unknown>> {
  await this.close();
  return { done: true, value };
}

/**
 * Makes `return()` close abstract-level's iterators, for dynalite's reads (see above). Idempotent; an
 * abstract-level that has a `return()` of its own keeps it.
 *
 * @example
 * closeLevelIteratorsOnReturn(); // before dynalite serves a Query
 */
export function closeLevelIteratorsOnReturn(): void {
  for (const level of dynaliteAbstractLevels()) {
    for (const iterator of [level.AbstractIterator, level.AbstractKeyIterator, level.AbstractValueIterator]) {
      if ('return' in iterator.prototype) continue;
      Object.defineProperty(iterator.prototype, 'return', {
        value: returnCloses,
        writable: true,
        configurable: true,
      });
    }
  }
}
