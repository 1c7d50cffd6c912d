import { quoteShown } from './quote.js';

/**
 * Renders a decoder's path (`['spec', 'nodeName', 0]`) as `spec.nodeName[0]`. Keys that
 * are not plain identifiers come from the request (annotation or data keys) and are
 * shown quoted, `data["x\n"]`, so they cannot break a message into lines.
 */
export function renderPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${quoteShown(String(segment))}]`;
  }
  return out;
}
