// A fresh in-memory DynamoDB with one table `t` keyed by the string attribute `k`: what the engine's
// unit tests write to when the table's shape is not what they test.
import { MemoryDynamoDb } from '../../../../local/memoryDynamoDb/engine.js';

export function keyedTable(): MemoryDynamoDb {
  const db = new MemoryDynamoDb();
  db.createTable({
    TableName: 't',
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'k', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'k', KeyType: 'HASH' }],
  });
  return db;
}
