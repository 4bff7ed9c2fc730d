// What a log line, a Lambda error record, a dead-letter message or a debugger could show of an error:
// tests assert a secret appears nowhere in it.
import { inspect } from 'node:util';

/** Every text an error and its cause chain expose: messages, stacks, fields, JSON and inspect output. */
export function everythingSaid(error: unknown): string {
  const parts: string[] = [inspect(error, { depth: 20, showHidden: true })];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 20; depth++) {
    if (!(current instanceof Error)) {
      parts.push(typeof current === 'string' ? current : JSON.stringify(current));
      break;
    }
    parts.push(current.name, current.message, current.stack ?? '', String(current), JSON.stringify(current));
    current = current.cause;
  }
  return parts.join('\n');
}
