// The consumed-capacity counter: every request asks DynamoDB for ReturnConsumedCapacity TOTAL, and
// the stores add what it reports here, so a benchmark or a handler can report units per pass.
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';

export interface TableCapacity {
  readonly readUnits: number;
  readonly writeUnits: number;
  readonly requests: number;
}

export interface CapacitySnapshot extends TableCapacity {
  /** Conditional writes that failed: DynamoDB bills them as writes, but reports no capacity for them. */
  readonly conditionalCheckFailures: number;
  readonly byTable: Readonly<Record<string, TableCapacity>>;
  /** Requests per operation (GetItem, Query, UpdateItem, …). */
  readonly byOperation: Readonly<Record<string, number>>;
  /**
   * Read requests that were eventually consistent (Queries of an index, or without ConsistentRead):
   * DynamoDB bills such a request at least 0.5 RRU, a strongly consistent one at least 1.
   */
  readonly eventuallyConsistentReads: number;
}

const READ_OPERATIONS = new Set(['GetItem', 'Query', 'BatchGetItem']);

function isCapacityList(
  consumed: ConsumedCapacity | readonly ConsumedCapacity[],
): consumed is readonly ConsumedCapacity[] {
  return Array.isArray(consumed);
}

/**
 * Totals of the capacity DynamoDB reports (every request asks for ReturnConsumedCapacity TOTAL), so
 * a benchmark can report read and write units per pass.
 *
 * @example
 * const before = stores.capacity.snapshot();
 * await runPass();
 * const used = CapacityCounter.difference(stores.capacity.snapshot(), before); // used.readUnits, used.writeUnits
 */
export class CapacityCounter {
  private readUnits = 0;
  private writeUnits = 0;
  private requests = 0;
  private conditionalCheckFailures = 0;
  private eventuallyConsistentReads = 0;
  private readonly tables = new Map<string, { readUnits: number; writeUnits: number; requests: number }>();
  private readonly operations = new Map<string, number>();

  record(
    operation: string,
    table: string,
    consumed: ConsumedCapacity | readonly ConsumedCapacity[] | undefined,
  ): void {
    this.requests++;
    this.operations.set(operation, (this.operations.get(operation) ?? 0) + 1);
    const entries: readonly ConsumedCapacity[] =
      consumed === undefined ? [] : isCapacityList(consumed) ? consumed : [consumed];
    const read = READ_OPERATIONS.has(operation);
    const perTable = this.tableEntry(table);
    perTable.requests++;
    for (const entry of entries) {
      const units = entry.CapacityUnits ?? (read ? entry.ReadCapacityUnits : entry.WriteCapacityUnits) ?? 0;
      const target = this.tableEntry(entry.TableName ?? table);
      if (read) {
        this.readUnits += units;
        target.readUnits += units;
      } else {
        this.writeUnits += units;
        target.writeUnits += units;
      }
    }
  }

  recordConditionalCheckFailure(): void {
    this.conditionalCheckFailures++;
  }

  /** A read request that was eventually consistent (recorded besides `record`). */
  recordEventuallyConsistentRead(): void {
    this.eventuallyConsistentReads++;
  }

  snapshot(): CapacitySnapshot {
    return {
      readUnits: this.readUnits,
      writeUnits: this.writeUnits,
      requests: this.requests,
      conditionalCheckFailures: this.conditionalCheckFailures,
      eventuallyConsistentReads: this.eventuallyConsistentReads,
      byTable: Object.fromEntries([...this.tables].map(([name, t]) => [name, { ...t }])),
      byOperation: Object.fromEntries(this.operations),
    };
  }

  reset(): void {
    this.readUnits = this.writeUnits = this.requests = this.conditionalCheckFailures = 0;
    this.eventuallyConsistentReads = 0;
    this.tables.clear();
    this.operations.clear();
  }

  /** What was consumed between two snapshots. */
  static difference(after: CapacitySnapshot, before: CapacitySnapshot): CapacitySnapshot {
    const minus = (a: TableCapacity, b: TableCapacity | undefined): TableCapacity => ({
      readUnits: a.readUnits - (b?.readUnits ?? 0),
      writeUnits: a.writeUnits - (b?.writeUnits ?? 0),
      requests: a.requests - (b?.requests ?? 0),
    });
    return {
      ...minus(after, before),
      conditionalCheckFailures: after.conditionalCheckFailures - before.conditionalCheckFailures,
      eventuallyConsistentReads: after.eventuallyConsistentReads - before.eventuallyConsistentReads,
      byTable: Object.fromEntries(
        Object.entries(after.byTable).map(([name, t]) => [name, minus(t, before.byTable[name])]),
      ),
      byOperation: Object.fromEntries(
        Object.entries(after.byOperation).map(([op, n]) => [op, n - (before.byOperation[op] ?? 0)]),
      ),
    };
  }

  private tableEntry(table: string): { readUnits: number; writeUnits: number; requests: number } {
    let entry = this.tables.get(table);
    if (entry === undefined) {
      entry = { readUnits: 0, writeUnits: 0, requests: 0 };
      this.tables.set(table, entry);
    }
    return entry;
  }
}
