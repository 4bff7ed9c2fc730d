// The real-time Clock (shared/ports/clock.ts).
import type { Clock } from '../ports/clock.js';

/** The system's wall clock. */
export const systemClock: Clock = { now: () => Date.now() };
