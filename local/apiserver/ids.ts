// UIDs and generateName suffixes. Seeded, so a simulation run twice produces the same objects (a real
// server draws them at random; nothing may depend on their values).

/** mulberry32: a small, well-distributed 32-bit PRNG. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// upstream k8s.io/apimachinery/pkg/util/rand: no vowels (no words), no confusable characters.
const alphanums = 'bcdfghjklmnpqrstvwxz2456789';

export class IdSource {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  /** A random (version 4) UUID. */
  uid(): string {
    const hex = Array.from({ length: 32 }, () => Math.floor(this.next() * 16).toString(16));
    hex[12] = '4';
    hex[16] = (Math.floor(this.next() * 4) + 8).toString(16);
    const s = hex.join('');
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }

  /** upstream names.SimpleNameGenerator: the prefix (cut to fit 63) plus five random characters. */
  generateName(prefix: string): string {
    const base = prefix.length > 58 ? prefix.slice(0, 58) : prefix;
    let suffix = '';
    for (let i = 0; i < 5; i++) suffix += alphanums.charAt(Math.floor(this.next() * alphanums.length));
    return base + suffix;
  }
}
