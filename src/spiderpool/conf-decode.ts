/**
 * conf.yml as Spiderpool's two components decode it: its agent with `gopkg.in/yaml.v3`, its
 * controller with `gopkg.in/yaml.v2`, each with plain `yaml.Unmarshal` (yaml-go/unmarshal.ts).
 * What either refuses becomes a field error naming the component that would stop, with what
 * to write instead; keys the struct lacks, which both skip unread, become warnings
 * (conf-unknown-keys.ts).
 */
import { invalid, type FieldError, type FieldWarning } from '../kubernetes/field-errors.js';
import { ADVICE_VALUE_CHARS, escapeShort, escapeUnprintable } from '../go/strconv-quote.js';
import { trimBlanks } from '../yaml-go/libyaml-chars.js';
import type { GoStruct, GoType, StructType } from '../yaml-go/go-types.js';
import { unmarshal } from '../yaml-go/unmarshal.js';
import type { DecodeProblem, Refusal } from '../yaml-go/unmarshal-context.js';
import { byComponent, type Component, type Stops } from './conf-components.js';
import { unknownKeyWarning } from './conf-unknown-keys.js';

/**
 * Both decoders' decoding of a text's first document (Go's `Unmarshal` reads only that).
 * `agent` (yaml.v3) and `controller` (yaml.v2) hold each decoder's value, when it decodes;
 * `errors` say why a decoder refuses and `stops` which. `more`: another document with
 * content follows; `empty`: the first document is empty or null. `warnings` are keyed
 * by field path (each warned about once).
 */
export interface GoYamlDecoding {
  agent?: GoStruct;
  controller?: GoStruct;
  errors: FieldError[];
  stops: Stops;
  more: boolean;
  empty: boolean;
  warnings: Map<string, FieldWarning>;
  /** The 1-based line the first document ends at without a marker, when it does (libyaml-parse.ts `implicitEnd`). */
  dedentLine?: number;
  /** The first document is a flow collection (`{...}` or `[...]`) that ends on `dedentLine`, with more after it. */
  flowRoot?: boolean;
}

/**
 * Decodes `written` into a value of struct type `type` with both Go decoders. Field paths
 * in errors and warnings are relative to the document (`""` for the whole document,
 * `podResourceInject.namespacesExclude`, ...). Never throws for any input text.
 */
export function decodeGoYaml(written: string, type: StructType): GoYamlDecoding {
  const { v2, v3, refused, unknownKeys, more, empty, dedentLine, flowRoot } = unmarshal(written, type);
  const place = { more, empty, ...(dedentLine !== undefined ? { dedentLine } : {}), ...(flowRoot ? { flowRoot } : {}) };
  if (refused !== undefined) return { errors: [refusalError(refused)], stops: { agent: true, controller: true }, warnings: new Map(), ...place };
  const warnings = new Map<string, FieldWarning>();
  for (const { key, parent, type: struct } of unknownKeys) {
    const warning = unknownKeyWarning(key, parent, struct);
    if (!warnings.has(warning.field)) warnings.set(warning.field, warning);
  }
  return {
    errors: problemErrors(v3.problems, v2.problems),
    stops: { agent: v3.value === undefined, controller: v2.value === undefined },
    warnings,
    ...place,
    ...(v3.value !== undefined ? { agent: v3.value } : {}),
    ...(v2.value !== undefined ? { controller: v2.value } : {}),
  };
}

const AGENT = "Spiderpool's agent (gopkg.in/yaml.v3)";
const CONTROLLER = "Spiderpool's controller (gopkg.in/yaml.v2)";

/** Who stops, in a decode error. */
const DECODE_STOPS: Readonly<Record<Component, string>> = {
  both: "Spiderpool's agent (gopkg.in/yaml.v3) and controller (gopkg.in/yaml.v2) refuse to start",
  agent: `${AGENT} refuses to start (its controller reads it)`,
  controller: `${CONTROLLER} refuses to start (its agent reads it)`,
};

/** The field error for a text both decoders refuse as a whole, or that this webhook refuses to read. */
function refusalError({ by, field, problem }: Refusal): FieldError {
  switch (by) {
    case 'limit':
      return invalid(
        '',
        undefined,
        `${problem}: this webhook's own limit against hostile input, not Spiderpool's (whose configuration is a few KiB, six levels deep); shorten conf.yml`,
      );
    case 'unread':
      return invalid(
        '',
        undefined,
        `${problem}: refused by this webhook's own limit, not by Spiderpool, whose decoders read the character; write a line break (or a space) instead of it`,
      );
    case 'tag':
      return notDecodable(field, `${problem}, which Spiderpool's decoders do not read as written; remove the tag`);
    case 'go':
      return notDecodable(field, problem);
  }
}

function notDecodable(field: string, why: string): FieldError {
  return invalid(field, undefined, `${why}; Spiderpool's agent and controller cannot decode it and refuse to start: correct conf.yml and apply it again`);
}

/** One field error per Go message and place, naming the components it stops. */
function problemErrors(v3: DecodeProblem[], v2: DecodeProblem[]): FieldError[] {
  const where = (p: DecodeProblem) => (p.line === undefined ? '' : `line ${p.line}, column ${p.column}: `);
  return byComponent(
    v3,
    v2,
    (p) => `${p.field}\n${p.message}\n${where(p)}`,
    // Go's messages and the field paths hold keys and values as written, which quoted
    // escapes (`"\e[31m"`) can fill with controls: escaped, so a cause stays one harmless line.
    (p, stops) =>
      invalid(
        escapeUnprintable(p.field),
        p.kind === 'type' ? p.value : undefined,
        `${where(p)}${escapeUnprintable(p.message)}, so ${DECODE_STOPS[stops]}; ${escapeUnprintable(advice(p))}`,
      ),
  );
}

/** What to write instead, for one problem. */
function advice(p: DecodeProblem): string {
  switch (p.kind) {
    case 'type':
      return p.tag === '!' ? 'remove the "!" tag, which makes the value a string for the controller' : adviceFor(p.type, p.written, p.value);
    case 'tag':
      return 'remove the tag';
    case 'binary':
      return 'write valid base64 or remove the tag';
    case 'lookahead':
      return 'remove what follows the first document, or correct it';
    case 'duplicate-key':
      return `write ${p.key} once in this mapping (the controller keeps the last, the agent refuses both)`;
    case 'field-set-twice':
      return `set ${p.key} once in this mapping (the controller keeps the last, the agent refuses both)`;
  }
}

/** What to write instead of a value of the wrong shape. */
function adviceFor(type: GoType, written: 'mapping' | 'sequence' | 'scalar', text: string | undefined): string {
  const wrote = written === 'mapping' ? 'a mapping' : written === 'sequence' ? 'a list' : undefined;
  switch (type.go) {
    case 'bool':
      return text !== undefined && /^(true|false|yes|no|on|off|y|n)$/i.test(trimBlanks(text))
        ? `write ${/^(true|yes|on|y)$/i.test(trimBlanks(text)) ? 'true' : 'false'} without quotes`
        : 'write true or false, without quotes';
    case 'int':
      return text !== undefined && /^[-+]?[0-9][0-9_]*$/.test(trimBlanks(text)) && trimBlanks(text).length > 18
        ? 'write a whole number between -9223372036854775808 and 9223372036854775807'
        : 'write a whole number without quotes, such as 10';
    case 'string':
      return `write a single value${wrote ? `, not ${wrote}` : ''} (quote it if it contains ": " or " #")`;
    case 'slice':
      return text !== undefined && type.of.go === 'string'
        ? `write a list: [${escapeShort(text, ADVICE_VALUE_CHARS)}]`
        : `write a list${type.of.go === 'struct' ? ' of mappings ("- key: value" items)' : ' ("- item" lines or [a, b])'}`;
    case 'map':
      return 'write a mapping of label keys to values, such as {kubernetes.io/os: linux}';
    case 'struct':
      return `write a mapping of its fields (indented "key: value" lines), or remove the key`;
  }
}
