/**
 * The parts of Go's `url.Parse` (go/src/net/url/url.go) that decide whether a URL is
 * refused, with Go's error text, so that `serverUrl` is judged as Spiderpool's Go code
 * parses it. WHATWG URL parsing (`new URL`) differs: it trims and escapes what Go refuses
 * (`http://h\x`, `http://h/%zz`) and refuses what Go takes (`http://h:99999`).
 */
import { isIPv4, isIPv6 } from 'node:net';
import { quoteGoString } from './strconv-quote.js';
import { goAtLeast } from './version.js';

/**
 * Go 1.26 takes an http(s) URL's port from the host's first colon (GODEBUG
 * `urlstrictcolons`, go.dev/issue/75223), refusing `http://h:80:80`; earlier releases, and
 * Go 1.26 for other schemes, from the last. Follows the release of `go/version.ts`.
 */
const STRICT_COLONS = goAtLeast(26);

/** What Go's `url.Parse` returns, as far as `serverUrl` needs it. */
export type GoUrl = { ok: true; scheme: string; host: string } | { ok: false; error: string };

/**
 * Parses `raw` as Go's `url.Parse` does.
 *
 * @returns the lower-cased scheme and the host (with port, as Go's `URL.Host`), or Go's
 *   error text, e.g. `parse "http://h\\x": invalid character "\\" in host name`.
 */
export function parseGoUrl(raw: string): GoUrl {
  const hash = raw.indexOf('#');
  const [beforeFragment, fragment] = hash < 0 ? [raw, ''] : [raw.slice(0, hash), raw.slice(hash + 1)];
  const fail = (url: string, error: string): GoUrl => ({ ok: false, error: `parse ${quoteGoString(url)}: ${error}` });

  if (/[\x00-\x1f\x7f]/.test(beforeFragment)) return fail(beforeFragment, 'net/url: invalid control character in URL');
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(beforeFragment);
  if (beforeFragment.startsWith(':')) return fail(beforeFragment, 'missing protocol scheme');
  let rest = scheme ? beforeFragment.slice(scheme[0].length) : beforeFragment;
  const question = rest.indexOf('?');
  if (question >= 0) rest = rest.slice(0, question); // the query is not checked by Parse
  const opaque = scheme !== null && !rest.startsWith('/'); // "scheme:opaque" is taken as it is
  if (!scheme && !rest.startsWith('/') && rest.split('/')[0]!.includes(':')) {
    // Go refuses this "to avoid confusion with malformed schemes".
    return fail(beforeFragment, 'first path segment in URL cannot contain colon');
  }
  let host = '';
  if (!opaque && rest.startsWith('//') && (scheme || !rest.startsWith('///'))) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    rest = slash < 0 ? '' : rest.slice(slash);
    const parsed = parseAuthority(authority, /^https?$/i.test(scheme?.[1] ?? ''));
    if (typeof parsed !== 'string') return fail(beforeFragment, parsed.error);
    host = parsed;
  }
  const pathError = opaque ? undefined : escapeError(rest, 'path');
  if (pathError) return fail(beforeFragment, pathError);
  const fragmentError = escapeError(fragment, 'fragment');
  if (fragmentError) return fail(raw, fragmentError);
  return { ok: true, scheme: scheme ? scheme[1]!.toLowerCase() : '', host };
}

/** Go's `parseAuthority`: `[userinfo@]host[:port]`; returns the host or the error. `web`: an http(s) URL (see {@link STRICT_COLONS}). */
function parseAuthority(authority: string, web: boolean): string | { error: string } {
  const at = authority.lastIndexOf('@');
  const host = parseHost(authority.slice(at + 1), web);
  if (typeof host !== 'string') return host;
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) return { error: 'net/url: invalid userinfo' };
    // Username and password are unescaped apart, so an escape cannot span the colon.
    const colon = userinfo.indexOf(':');
    const parts = colon < 0 ? [userinfo] : [userinfo.slice(0, colon), userinfo.slice(colon + 1)];
    for (const part of parts) {
      const userError = escapeError(part, 'userinfo');
      if (userError) return { error: userError };
    }
  }
  return host;
}

/**
 * Go's `parseHost`: a `[...]` IP literal must hold an IPv6 address (a zone after `%25`
 * allowed); otherwise no `[`, and a port of digits after the colon. The returned host is
 * unescaped, as Go's `URL.Host`.
 */
function parseHost(host: string, web: boolean): string | { error: string } {
  const open = host.lastIndexOf('[');
  if (open > 0) return { error: 'invalid IP-literal' };
  if (open === 0) {
    const close = host.lastIndexOf(']');
    if (close < 0) return { error: "missing ']' in host" };
    const colonPort = host.slice(close + 1);
    if (!/^(:[0-9]*)?$/.test(colonPort)) return { error: `invalid port ${quoteGoString(colonPort)} after host` };
    const inside = host.slice(1, close);
    const zone = inside.indexOf('%25');
    const address = zone < 0 ? inside : inside.slice(0, zone);
    const error = escapeError(address, 'host') ?? (zone < 0 ? undefined : escapeError(inside.slice(zone), 'zone'));
    if (error) return { error };
    const unescaped = unescape(inside);
    // netip.ParseAddr's own wording is not reproduced, only its verdict.
    if (!isIPv6(unescaped)) return { error: isIPv4(unescaped) ? 'invalid IP-literal' : 'invalid host: not an IPv6 address' };
    return `[${unescaped}]${colonPort}`;
  }
  const colon = web && STRICT_COLONS ? host.indexOf(':') : host.lastIndexOf(':');
  if (colon >= 0 && !/^:[0-9]*$/.test(host.slice(colon))) {
    return { error: `invalid port ${quoteGoString(host.slice(colon))} after host` };
  }
  const error = escapeError(host, 'host');
  return error ? { error } : unescape(host);
}

/** ASCII Go's `shouldEscape(c, encodeHost)` lets stand in a host name. */
const HOST_CHARACTER = /[A-Za-z0-9!$&'()*+,;=:[\]<>"\-_.~]/;
const HEX = /^[0-9a-fA-F]$/;
const utf8 = new TextEncoder();

/**
 * Go's `unescape` checks, byte by byte on the UTF-8 text: every `%` starts a two-hex-digit
 * escape; in a host only `%25` or an escape of a non-ASCII byte, and no ASCII character
 * that must be escaped.
 */
function escapeError(s: string, mode: 'host' | 'zone' | 'path' | 'fragment' | 'userinfo'): string | undefined {
  const bytes = utf8.encode(s);
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === 0x25) {
      const escape = bytes.subarray(i, i + 3);
      const hex = (k: number) => k < escape.length && HEX.test(String.fromCharCode(escape[k]!));
      if (!hex(1) || !hex(2) || (mode === 'host' && parseInt(String.fromCharCode(escape[1]!), 16) < 8 && !isPercent25(escape))) {
        return `invalid URL escape ${quoteGoBytes(escape)}`;
      }
      i += 2;
    } else if (mode === 'host' && c < 0x80 && !HOST_CHARACTER.test(String.fromCharCode(c))) {
      return `invalid character ${quoteGoString(String.fromCharCode(c))} in host name`;
    }
  }
  return undefined;
}

function isPercent25(escape: Uint8Array): boolean {
  return escape[1] === 0x32 && escape[2] === 0x35;
}

/**
 * `strconv.Quote` of bytes that may hold a partial UTF-8 sequence: each complete character
 * quoted as usual, each stray byte as `\\xNN`.
 */
function quoteGoBytes(bytes: Uint8Array): string {
  const quoted = utf8Pieces(bytes).map((piece) =>
    typeof piece === 'string' ? quoteGoString(piece).slice(1, -1) : `\\x${piece.toString(16).padStart(2, '0')}`,
  );
  return `"${quoted.join('')}"`;
}

/** Percent-escapes decoded to bytes, read as Go's JSON encoder shows them: U+FFFD per stray byte. */
function unescape(s: string): string {
  const bytes = utf8.encode(s);
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x25 && i + 2 < bytes.length) {
      out.push(parseInt(String.fromCharCode(bytes[i + 1]!, bytes[i + 2]!), 16));
      i += 2;
    } else out.push(bytes[i]!);
  }
  return utf8Pieces(Uint8Array.from(out))
    .map((piece) => (typeof piece === 'string' ? piece : '\ufffd'))
    .join('');
}

/** UTF-8 bytes split as Go's `utf8.DecodeRune` walks them: characters, and stray bytes as numbers. */
function utf8Pieces(bytes: Uint8Array): Array<string | number> {
  const strict = new TextDecoder('utf-8', { fatal: true });
  const pieces: Array<string | number> = [];
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!;
    const length = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    let char: string | undefined;
    try {
      char = i + length <= bytes.length ? strict.decode(bytes.subarray(i, i + length)) : undefined;
    } catch {
      char = undefined;
    }
    pieces.push(char ?? lead);
    i += char === undefined ? 1 : length;
  }
  return pieces;
}
