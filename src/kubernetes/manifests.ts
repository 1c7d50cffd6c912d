/**
 * Kubernetes manifests as `kubectl apply -f` reads them: a file of YAML documents or JSON,
 * each an object or a `kind: List` (or `…List`) whose `items` are the objects; a folder's
 * `.yaml`, `.yml` and `.json` files in name order (not recursive, as without `-R`).
 * Errors are one line naming the file.
 */
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { firstLine, syntaxReason } from './yaml-error.js';
import type { KubeObject } from './build.js';

/** An object of a manifest and where it came from, for messages. */
export interface ManifestObject {
  object: KubeObject;
  /** The file as given (or `STDIN`, as kubectl names it). */
  source: string;
}

/** A manifest that cannot be read or is not Kubernetes objects: the message names the file. */
export class ManifestError extends Error {
  override name = 'ManifestError';
}

/** How many aliases a document may expand (a billion-laughs guard, as for `conf.yml`). */
const MAX_ALIAS_COUNT = 100;

/** Extensions kubectl reads from a folder. */
const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

export function isKubeObject(value: unknown): value is KubeObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const { apiVersion, kind } = value as Record<string, unknown>;
  return typeof apiVersion === 'string' && apiVersion !== '' && typeof kind === 'string' && kind !== '';
}

/**
 * A `kind: List` (or `FooList`): its `items` array; `items: null` (or a `List` without
 * `items`) holds no object.
 *
 * @returns `undefined` for an object that is no list, `'not a list'` for items of another shape.
 */
export function listItems(value: unknown): unknown[] | 'not a list' | undefined {
  const { kind, items } = (value ?? {}) as { kind?: unknown; items?: unknown };
  if (typeof kind !== 'string' || !kind.endsWith('List')) return undefined;
  if (Array.isArray(items)) return items;
  if (items === null || (items === undefined && kind === 'List')) return [];
  return items === undefined ? undefined : 'not a list';
}

/** One parsed YAML document: its data, or why it has none in one line (`syntax` for a syntax error). */
export type DocumentData = { ok: true; value: unknown } | { ok: false; syntax: boolean; reason: string };

/** The data of `doc`, with the alias guard; never throws. */
export function documentData(doc: ReturnType<typeof parseAllDocuments>[number]): DocumentData {
  const error = doc.errors[0];
  if (error !== undefined) return { ok: false, syntax: true, reason: syntaxReason(error.message) };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (e) {
    return { ok: false, syntax: false, reason: firstLine((e as Error).message) };
  }
}

/**
 * The documents of `text` as data: YAML (JSON is YAML too), empty documents skipped.
 *
 * @throws ManifestError naming `source` and the first syntax error (with its line).
 */
export function parseDocuments(text: string, source: string): unknown[] {
  const values: unknown[] = [];
  for (const doc of parseAllDocuments(text)) {
    const data = documentData(doc);
    if (!data.ok) throw new ManifestError(`${source}: ${data.syntax ? 'not valid YAML or JSON' : 'cannot be read as data'}: ${data.reason}`);
    if (data.value !== null && data.value !== undefined) values.push(data.value);
  }
  return values;
}

/**
 * The Kubernetes objects of `text`, Lists expanded.
 *
 * @throws ManifestError when the text does not parse, or a document (or List item) is not
 *   an object with `apiVersion` and `kind`.
 */
export function parseManifests(text: string, source: string): ManifestObject[] {
  const objects: ManifestObject[] = [];
  for (const [index, value] of parseDocuments(text, source).entries()) {
    const where = `${source}: document ${index + 1}`;
    if (!isKubeObject(value)) throw new ManifestError(`${where} is not a Kubernetes object (it needs apiVersion and kind)`);
    const items = listItems(value);
    if (items === undefined) {
      objects.push({ object: value, source });
      continue;
    }
    if (items === 'not a list') throw new ManifestError(`${where} is a ${value.kind} whose items is not a list`);
    items.forEach((item, i) => {
      if (!isKubeObject(item)) throw new ManifestError(`${where}, items[${i}] is not a Kubernetes object (it needs apiVersion and kind)`);
      objects.push({ object: item, source });
    });
  }
  return objects;
}

/**
 * The most bytes one input (a file, standard input) may hold: hundreds of times a cluster's
 * pools as `kubectl get -o yaml` lists them, far below the ~512 MiB string V8 can hold.
 */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/**
 * `chunks` (Buffers) as UTF-8 text, read only up to `maxBytes`, so an endless input
 * (`/dev/zero`, a stream) ends in a message instead of filling memory.
 *
 * @throws ManifestError naming `source` past `maxBytes`.
 */
export async function boundedText(chunks: AsyncIterable<unknown> | Iterable<unknown>, source: string, maxBytes = MAX_INPUT_BYTES): Promise<string> {
  const parts: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of chunks) {
    bytes += (chunk as Buffer).length;
    if (bytes > maxBytes) throw new ManifestError(`${source}: holds more than ${maxBytes} bytes, this command's limit for one input; split it`);
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** `path`'s text (at most {@link MAX_INPUT_BYTES}), or a one-line error naming it. */
export async function readText(file: string): Promise<string> {
  try {
    return await boundedText(createReadStream(file), file);
  } catch (e) {
    if (e instanceof ManifestError) throw e;
    throw new ManifestError(describeFileError(file, e));
  }
}

/** Node's file-system error codes in plain words, as `ls` and `cat` would say them. */
const FILE_ERROR_REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or folder',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a folder, not a file',
  ENOTDIR: 'a part of the path is not a folder',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
  EMFILE: 'too many open files',
};

/** `nope.yml: cannot be read: no such file or folder` for an error reading `file`. */
function describeFileError(file: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const why = (code !== undefined ? FILE_ERROR_REASONS[code] : undefined) ?? (e instanceof Error ? e.message : String(e));
  return `${file}: cannot be read: ${why}`;
}

/**
 * The manifest files `given` names: itself, or a folder's `.yaml`, `.yml` and `.json`
 * files in name order.
 *
 * @throws ManifestError for a path that cannot be read, or a folder without manifests.
 */
export async function manifestFiles(given: string): Promise<string[]> {
  let isFolder: boolean;
  try {
    isFolder = (await stat(given)).isDirectory();
  } catch (e) {
    throw new ManifestError(describeFileError(given, e));
  }
  if (!isFolder) return [given];
  const files = (await readdir(given)).filter((f) => MANIFEST_EXTENSIONS.has(path.extname(f).toLowerCase())).sort();
  if (files.length === 0) throw new ManifestError(`${given}: the folder holds no .yaml, .yml or .json file`);
  return files.map((f) => path.join(given, f));
}

/**
 * Every object of the manifests at `paths` (files or folders), in order.
 *
 * @throws ManifestError for a path that cannot be read, a folder without manifests, or a
 *   file that is not Kubernetes objects.
 */
export async function readManifestPaths(paths: readonly string[]): Promise<ManifestObject[]> {
  const objects: ManifestObject[] = [];
  for (const given of paths) {
    for (const file of await manifestFiles(given)) {
      // One by one: spreading a List of some 130 000 items overflows the call stack.
      for (const object of parseManifests(await readText(file), file)) objects.push(object);
    }
  }
  return objects;
}
