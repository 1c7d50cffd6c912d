/**
 * What Go's decoders read after the first document (gopkg.in/yaml.v2 v2.4.0 and yaml.v3
 * v3.0.1, ports of libyaml's reader and scanner). Both stop at the token that ends the
 * first document (its `---` or `...` at column 0, or the end of the text), but:
 * - yaml.v3's scanner keeps two more tokens queued behind the one the parser reads
 *   (scannerc.go `yaml_parser_fetch_more_tokens`: "the comment parsing logic requires a
 *   lookahead of two tokens"), so a token error in the two tokens after that marker stops
 *   the agent alone: a line holding only a tab ("found character that cannot start any
 *   token"), an unterminated quote, a bad directive, anchor or tag, a tab in a block
 *   scalar's indentation;
 * - the reader decodes the input 512 bytes at a time (readerc.go
 *   `yaml_parser_update_buffer`, yamlprivateh.go `input_raw_buffer_size`) and fails on a
 *   control character anywhere in a chunk it decodes ("control characters are not
 *   allowed"), so one past the first document stops each decoder whose scanner reached
 *   its chunk.
 */
import { ANCHOR_CHARACTER, blankOrEnd, isBlank, isBreak } from './libyaml-chars.js';
import { scanTag, scanTagDirective } from './libyaml-tags.js';

/** How far each decoder's scanner looks (characters of the text) and the token error yaml.v3's lookahead meets. */
export interface Reach {
  v2: number;
  v3: number;
  v3Problem?: string;
}

/** Bytes libyaml's reader decodes at a time. */
export const READ_CHUNK_BYTES = 512;

/** The UTF-8 bytes of a byte order mark (U+FEFF), which the reader's first chunk holds. */
export const BOM_BYTES = 3;

/**
 * The reach of both decoders into `text` when the first document ends at the marker at
 * `end` (`undefined`: at the end of the text, which both then read whole).
 */
export function readPastFirstDocument(text: string, end: number | undefined): Reach {
  if (end === undefined) return { v2: text.length, v3: text.length };
  // The marker is checked with the character after it (`update_buffer(parser, 4)`).
  const v2 = Math.min(text.length, end + 4);
  const scanner = new TailScanner(text, end + 3);
  const problem = scanner.scanTokens();
  return { v2, v3: Math.max(v2, Math.min(text.length, scanner.reach)), ...(problem !== undefined ? { v3Problem: problem } : {}) };
}

/**
 * What each decoder's scanner meets past a first document that ends without a marker, at
 * `at`: a line less indented than an indented root collection (its start), or the end of a
 * root flow collection (just past its `]` or `}`, `afterFlow`). The parser peeks the token
 * there to end the document (parserc.go `yaml_parser_parse_document_end`, implicit), so a
 * token error in it stops both decoders (yaml.v2 also scans on while a simple key may
 * stand at it, into the next line); yaml.v3's lookahead of two more tokens stops the agent alone.
 */
export function scanPastImplicitEnd(text: string, at: number, afterFlow: boolean): { v2Problem?: string; v3Problem?: string } {
  return new TailScanner(text, at).scanAfterImplicitEnd(!afterFlow);
}

/**
 * libyaml's error for the block scalar whose header (`|` or `>`) is at `header`, in a
 * block collection whose indentation is `indent` (-1 at the document's top): a tab where
 * its indentation is read, up to the line after its last ("found a tab character where an
 * indentation space is expected"), or a bad header. The `yaml` package reads the tab as content.
 */
export function blockScalarProblem(text: string, header: number, indent: number): string | undefined {
  return new TailScanner(text, header).scanBlockScalar(indent);
}

/**
 * The characters of `text` the reader has decoded once the scanner has looked at its first
 * `reach` characters: whole 512-byte chunks of UTF-8 (a character cut by a chunk's end waits
 * for the next). `bomBytes`: the bytes of a byte order mark before `text`, which the first
 * chunk holds (readerc.go reads the input, BOM and all, 512 bytes at a time).
 */
export function decodedCharacters(text: string, reach: number, bomBytes: number): number {
  if (reach >= text.length) return text.length;
  const bytes = bomBytes + Buffer.byteLength(text.slice(0, reach), 'utf8');
  const read = Math.ceil(bytes / READ_CHUNK_BYTES) * READ_CHUNK_BYTES;
  let decoded = reach;
  let at = bytes;
  while (decoded < text.length) {
    const code = text.codePointAt(decoded)!;
    const width = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (at + width > read) break;
    at += width;
    decoded += code >= 0x10000 ? 2 : 1;
  }
  return decoded;
}

/** Double-quoted escapes libyaml knows, with the hex digits each takes. */
const ESCAPES: Readonly<Record<string, number>> = Object.fromEntries(
  [...'0abt\tnvfre "\'\\N_LP']
    .map((c) => [c, 0])
    .concat([
      ['x', 2],
      ['u', 4],
      ['U', 8],
    ]),
);

/**
 * libyaml's scanner from just after the first document's marker, fetching tokens until two
 * more are queued (the marker is the first): block context, no indentation yet, no simple
 * key allowed on the marker's line. Each fetcher follows scannerc.go's of the same name.
 */
class TailScanner {
  reach: number;
  private flow = 0;
  private indents: number[] = [];
  private indent = -1;
  private simpleKeyAllowed = false;
  /**
   * The simple key that may start at the last scalar, anchor, tag or flow opening, one per
   * flow level (scannerc.go `simple_keys`): a `[` keeps its own key open while its content is scanned.
   */
  private keys: Array<{ line: number; column: number; token: number } | undefined> = [undefined];

  private get key(): { line: number; column: number; token: number } | undefined {
    return this.keys[this.keys.length - 1];
  }

  private set key(key: { line: number; column: number; token: number } | undefined) {
    this.keys[this.keys.length - 1] = key;
  }
  private line = 0;
  private lineStart = 0;
  private tokens = 1;

  constructor(
    private readonly text: string,
    private pos: number,
  ) {
    this.reach = pos;
    this.lineStart = text.lastIndexOf('\n', pos - 1) + 1;
  }

  private get column(): number {
    return this.pos - this.lineStart;
  }

  private at(offset = 0): string | undefined {
    this.reach = Math.max(this.reach, this.pos + offset + 1);
    return this.text[this.pos + offset];
  }

  /** Skips one line break (CR LF as one). */
  private skipBreak(): void {
    if (this.at() === '\r' && this.at(1) === '\n') this.pos++;
    this.pos++;
    this.line++;
    this.lineStart = this.pos;
  }

  /** The block scalar whose header is at the position, in a block collection indented `indent` (-1 at the top). */
  scanBlockScalar(indent: number): string | undefined {
    this.indent = indent;
    return this.scanning(() => this.fetchBlockScalar());
  }

  /**
   * From the first token after an implicit end of the first document (no marker queued
   * yet; `simpleKeyAllowed`: at a line's start, not right after a flow collection's end):
   * yaml.v2's error in the tokens its parser peeks there (that token, and more while a
   * simple key may stand at it), then yaml.v3's in the two it queues beyond.
   */
  scanAfterImplicitEnd(simpleKeyAllowed: boolean): { v2Problem?: string; v3Problem?: string } {
    this.tokens = 0;
    this.simpleKeyAllowed = simpleKeyAllowed;
    // A key on an earlier line than the scan's position is stale already (`yaml_parser_stale_simple_keys`, checked before each fetch).
    const headPending = () => this.tokens < 1 || this.keys.some((key) => key?.token === 0 && key.line === this.line);
    const v2Problem = this.scanning(() => {
      while (headPending()) this.fetchNextToken();
    });
    if (v2Problem !== undefined) return { v2Problem, v3Problem: v2Problem };
    const v3Problem = this.scanning(() => {
      while (this.tokens < 3 || headPending()) this.fetchNextToken();
    });
    return v3Problem === undefined ? {} : { v3Problem };
  }

  /** Fetches tokens until three are queued; the scanner's error, if it meets one. */
  scanTokens(): string | undefined {
    return this.scanning(() => {
      while (this.tokens < 3) this.fetchNextToken();
    });
  }

  private scanning(scan: () => void): string | undefined {
    try {
      scan();
      return undefined;
    } catch (e) {
      if (e instanceof ScanError) return e.message;
      throw e;
    }
  }

  private fail(problem: string): never {
    const before = this.text.slice(0, this.pos);
    const line = before.split(/\r\n|[\r\n\u0085\u2028\u2029]/).length;
    throw new ScanError(`line ${line}: ${problem}`);
  }

  private fetchNextToken(): void {
    this.scanToNextToken();
    this.keys = this.keys.map((key) => (key !== undefined && key.line !== this.line ? undefined : key));
    this.unrollIndent(this.column);
    this.at(3);
    const c = this.at();
    if (c === undefined) {
      // STREAM-END: no simple key stays possible (scannerc.go `yaml_parser_fetch_stream_end`).
      this.unrollIndent(-1);
      this.keys = this.keys.map(() => undefined);
      this.tokens++;
      return;
    }
    if (this.column === 0 && c === '%') return this.fetchDirective();
    const marker = this.text.slice(this.pos, this.pos + 3);
    if (this.column === 0 && (marker === '---' || marker === '...') && blankOrEnd(this.at(3))) {
      this.unrollIndent(-1);
      this.key = undefined;
      this.simpleKeyAllowed = false;
      this.pos += 3;
      this.tokens++;
      return;
    }
    this.fetchToken(c);
    this.scanLineComment();
  }

  private fetchToken(c: string): void {
    const next = this.at(1);
    if (c === '[' || c === '{') {
      this.saveSimpleKey();
      this.flow++;
      this.keys.push(undefined);
      this.simpleKeyAllowed = true;
      return this.single();
    }
    if (c === ']' || c === '}') {
      this.key = undefined;
      if (this.flow > 0) {
        this.flow--;
        this.keys.pop();
      }
      this.simpleKeyAllowed = false;
      return this.single();
    }
    if (c === ',') {
      this.key = undefined;
      this.simpleKeyAllowed = true;
      return this.single();
    }
    if (c === '-' && blankOrEnd(next)) {
      if (this.flow === 0) {
        if (!this.simpleKeyAllowed) this.fail('block sequence entries are not allowed in this context');
        this.rollIndent(this.column);
      }
      this.key = undefined;
      this.simpleKeyAllowed = true;
      return this.single();
    }
    if (c === '?' && (this.flow > 0 || blankOrEnd(next))) {
      if (this.flow === 0) {
        if (!this.simpleKeyAllowed) this.fail('mapping keys are not allowed in this context');
        this.rollIndent(this.column);
      }
      this.key = undefined;
      this.simpleKeyAllowed = this.flow === 0;
      return this.single();
    }
    if (c === ':' && (this.flow > 0 || blankOrEnd(next))) {
      if (this.key !== undefined) {
        this.tokens++;
        if (this.flow === 0) this.rollIndent(this.key.column);
        this.key = undefined;
        this.simpleKeyAllowed = false;
      } else {
        if (this.flow === 0) {
          if (!this.simpleKeyAllowed) this.fail('mapping values are not allowed in this context');
          this.rollIndent(this.column);
        }
        this.simpleKeyAllowed = this.flow === 0;
      }
      return this.single();
    }
    if (c === '*' || c === '&') return this.fetchAnchor();
    if (c === '!') return this.fetchTag();
    if ((c === '|' || c === '>') && this.flow === 0) return this.fetchBlockScalar();
    if (c === "'" || c === '"') return this.fetchFlowScalar(c);
    const indicator = '-?:,[]{}#&*!|>\'"%@`'.includes(c);
    if (!(blankOrEnd(c) || indicator) || (c === '-' && !isBlank(next)) || (this.flow === 0 && (c === '?' || c === ':') && !blankOrEnd(next))) {
      return this.fetchPlainScalar();
    }
    this.fail('found character that cannot start any token');
  }

  private single(): void {
    this.pos++;
    this.tokens++;
  }

  private saveSimpleKey(): void {
    if (this.simpleKeyAllowed) this.key = { line: this.line, column: this.column, token: this.tokens };
  }

  private rollIndent(column: number): void {
    if (this.indent < column) {
      this.indents.push(this.indent);
      this.indent = column;
      this.tokens++;
    }
  }

  private unrollIndent(column: number): void {
    if (this.flow > 0) return;
    while (this.indent > column) {
      this.indent = this.indents.pop()!;
      this.tokens++;
    }
  }

  /** `yaml_parser_scan_to_next_token`: blanks (tabs where allowed), comments, line breaks. */
  private scanToNextToken(): void {
    for (;;) {
      if (this.column === 0 && this.at() === '\ufeff') this.pos++;
      while (this.at() === ' ' || ((this.flow > 0 || !this.simpleKeyAllowed) && this.at() === '\t')) this.pos++;
      if (this.at() === '#') while (!isBreak(this.at()) && this.at() !== undefined) this.pos++;
      if (!isBreak(this.at())) return;
      this.skipBreak();
      if (this.flow === 0) this.simpleKeyAllowed = true;
    }
  }

  /** yaml.v3's `yaml_parser_scan_line_comment` after a token: a comment on the rest of its line is read. */
  private scanLineComment(): void {
    let peek = 0;
    while (isBlank(this.at(peek))) peek++;
    if (this.at(peek) !== '#') return;
    while (this.at(peek) !== undefined && !isBreak(this.at(peek))) peek++;
  }

  private fetchDirective(): void {
    this.unrollIndent(-1);
    this.key = undefined;
    this.simpleKeyAllowed = false;
    const rest = /^[^\r\n\u0085\u2028\u2029]*/.exec(this.text.slice(this.pos))![0];
    this.at(rest.length);
    const name = /^%([0-9A-Za-z_-]*)/.exec(rest)![1]!;
    if (name === '') this.fail('could not find expected directive name');
    if (!blankOrEnd(rest[name.length + 1])) this.fail('found unexpected non-alphabetical character');
    if (name === 'TAG') {
      const directive = scanTagDirective(rest);
      if ('problem' in directive) this.fail(directive.problem);
    } else if (name === 'YAML') {
      const directive = /^%YAML[ \t]+[0-9]{1,9}\.[0-9]{1,9}(?=[ \t]|$)/.exec(rest);
      if (directive === null) this.fail('did not find a valid %YAML directive');
      if (!/^[ \t]*(#.*)?$/.test(rest.slice(directive[0].length))) this.fail('did not find expected comment or line break');
    } else this.fail('found unknown directive name');
    this.pos += rest.length;
    this.tokens++;
  }

  private fetchAnchor(): void {
    this.saveSimpleKey();
    this.simpleKeyAllowed = false;
    this.pos++;
    const start = this.pos;
    while (ANCHOR_CHARACTER.test(this.at() ?? '')) this.pos++;
    const end = this.at();
    if (this.pos === start || !(blankOrEnd(end) || '?:,]}%@`'.includes(end!))) this.fail('did not find expected alphabetic or numeric character');
    this.tokens++;
  }

  private fetchTag(): void {
    this.saveSimpleKey();
    this.simpleKeyAllowed = false;
    const scanned = scanTag(this.text, this.pos);
    this.pos = 'problem' in scanned ? scanned.at : scanned.end;
    this.at();
    if ('problem' in scanned) this.fail(scanned.problem);
    this.tokens++;
  }

  /** `yaml_parser_scan_block_scalar`: the header, then every line of the scalar. */
  private fetchBlockScalar(): void {
    this.key = undefined;
    this.simpleKeyAllowed = true;
    this.pos++;
    let increment = 0;
    for (let i = 0; i < 2; i++) {
      const c = this.at();
      if (c === '+' || c === '-') this.pos++;
      else if (c !== undefined && /[0-9]/.test(c) && increment === 0) {
        if (c === '0') this.fail('found an indentation indicator equal to 0');
        increment = Number(c);
        this.pos++;
      }
    }
    while (isBlank(this.at())) this.pos++;
    if (this.at() === '#') while (!isBreak(this.at()) && this.at() !== undefined) this.pos++;
    if (!blankOrEnd(this.at())) this.fail('did not find expected comment or line break');
    if (isBreak(this.at())) this.skipBreak();
    let indent = increment === 0 ? 0 : this.indent >= 0 ? this.indent + increment : increment;
    indent = this.blockScalarBreaks(indent);
    while (this.column === indent && this.at() !== undefined) {
      while (!isBreak(this.at()) && this.at() !== undefined) this.pos++;
      if (this.at() === undefined) break;
      this.skipBreak();
      this.blockScalarBreaks(indent);
    }
    this.tokens++;
  }

  /** `yaml_parser_scan_block_scalar_breaks`: the indentation (found when 0) after leading blank lines. */
  private blockScalarBreaks(given: number): number {
    let maxIndent = 0;
    for (;;) {
      while ((given === 0 || this.column < given) && this.at() === ' ') this.pos++;
      maxIndent = Math.max(maxIndent, this.column);
      if ((given === 0 || this.column < given) && this.at() === '\t') this.fail('found a tab character where an indentation space is expected');
      if (!isBreak(this.at())) break;
      this.skipBreak();
    }
    return given !== 0 ? given : Math.max(maxIndent, this.indent + 1, 1);
  }

  /** `yaml_parser_scan_flow_scalar`: up to the closing quote. */
  private fetchFlowScalar(quote: string): void {
    this.saveSimpleKey();
    this.simpleKeyAllowed = false;
    this.pos++;
    for (;;) {
      const marker = this.text.slice(this.pos, this.pos + 3);
      if (this.column === 0 && (marker === '---' || marker === '...') && blankOrEnd(this.at(3))) this.fail('found unexpected document indicator');
      const c = this.at();
      if (c === undefined) this.fail('found unexpected end of stream');
      if (isBreak(c)) {
        this.skipBreak();
        continue;
      }
      this.pos++;
      if (quote === "'" && c === "'") {
        if (this.at() !== "'") break;
        this.pos++;
      } else if (quote === '"' && c === '"') break;
      else if (quote === '"' && c === '\\') {
        const e = this.at();
        if (isBreak(e)) {
          this.skipBreak();
          continue;
        }
        const digits = e === undefined ? undefined : ESCAPES[e];
        if (digits === undefined) this.fail('found unknown escape character');
        this.pos++;
        const hex = this.text.slice(this.pos, this.pos + digits);
        this.at(digits - 1);
        if (hex.length < digits || !/^[0-9A-Fa-f]*$/.test(hex)) this.fail('did not find expected hexdecimal number');
        const code = digits > 0 ? parseInt(hex, 16) : 0;
        if ((code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) this.fail('found invalid Unicode character escape code');
        this.pos += digits;
      }
    }
    this.tokens++;
  }

  /** `yaml_parser_scan_plain_scalar`: over lines while they stay indented past the enclosing collection. */
  private fetchPlainScalar(): void {
    this.saveSimpleKey();
    this.simpleKeyAllowed = false;
    const indent = this.indent + 1;
    let leadingBlanks = false;
    for (;;) {
      const marker = this.text.slice(this.pos, this.pos + 3);
      if (this.column === 0 && (marker === '---' || marker === '...') && blankOrEnd(this.at(3))) break;
      if (this.at() === '#') break;
      while (!blankOrEnd(this.at())) {
        const c = this.at()!;
        if ((c === ':' && blankOrEnd(this.at(1))) || (this.flow > 0 && ',?[]{}'.includes(c))) break;
        this.pos++;
        leadingBlanks = false;
      }
      if (!(isBlank(this.at()) || isBreak(this.at()))) break;
      while (isBlank(this.at()) || isBreak(this.at())) {
        if (isBlank(this.at())) {
          if (leadingBlanks && this.column < indent && this.at() === '\t') this.fail('found a tab character that violates indentation');
          this.pos++;
        } else {
          this.skipBreak();
          leadingBlanks = true;
        }
      }
      if (this.flow === 0 && this.column < indent) break;
    }
    if (leadingBlanks) this.simpleKeyAllowed = true;
    this.tokens++;
  }
}

class ScanError extends Error {}
