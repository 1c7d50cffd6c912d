/**
 * A field path, after apimachinery's `field.Path` (k8s.io/apimachinery/pkg/util/validation/field,
 * path.go): `Path.of('spec', 'nodeName').index(0)` is `spec.nodeName[0]`,
 * `Path.of('metadata', 'annotations').key('ipam.spidernet.io/pair-pool')` is
 * `metadata.annotations[ipam.spidernet.io/pair-pool]`. The one spelling of a field in every
 * message: decode errors, rule errors and warnings alike. Unlike apimachinery, a key from
 * the request is shown escaped and bounded, so it cannot break a message into lines.
 */
import { escapeUnprintable, truncate } from '../go/strconv-quote.js';

export class Path {
  private constructor(private readonly rendered: string) {}

  /** The path of the object itself (renders as `""`). */
  static readonly ROOT = new Path('');

  /** `field.NewPath(name, more...)`. */
  static of(name: string, ...more: string[]): Path {
    return Path.ROOT.child(name, ...more);
  }

  /** `Child(name, more...)`: `.name` (no dot at the root). */
  child(name: string, ...more: string[]): Path {
    const names = [name, ...more].join('.');
    return new Path(this.rendered === '' ? names : `${this.rendered}.${names}`);
  }

  /** `Index(i)`: `[i]`. */
  index(i: number): Path {
    return new Path(`${this.rendered}[${i}]`);
  }

  /** `Key(key)`: `[key]`, a map key as written (escaped, bounded). */
  key(key: string): Path {
    return new Path(`${this.rendered}[${escapeUnprintable(truncate(key))}]`);
  }

  /** `String()`. */
  toString(): string {
    return this.rendered;
  }
}

/**
 * A decoder's path (zod's `issue.path`, `['spec', 'nodeName', 0]`) under `under`: numbers
 * are indexes, identifiers children, any other key (an annotation or data key) a key.
 */
export function pathOf(segments: readonly PropertyKey[], under: Path = Path.ROOT): Path {
  let path = under;
  for (const segment of segments) {
    if (typeof segment === 'number') path = path.index(segment);
    else if (typeof segment === 'string' && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)) path = path.child(segment);
    else path = path.key(String(segment));
  }
  return path;
}
