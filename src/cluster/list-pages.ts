/**
 * A paginated, streamed LIST of one resource (the API server's `limit`/`continue` chunks,
 * as client-go's `pager.ListPager` asks for them): each page's response is read as it
 * arrives (list-items.ts), each item handed to `onItem` as soon as it is parsed, so neither
 * the whole list nor a whole page is ever held as one string or one array of full objects.
 * Between pages the loop yields to the event loop (`setImmediate`), so probes and reviews
 * are answered while a large list runs. Authentication and TLS are client-node's
 * (`KubeConfig.applyToHTTPSOptions`: client certificates, tokens, exec plugins, proxies);
 * client-node's own list call cannot stream nor page by itself, hence this module.
 */
import http from 'node:http';
import https from 'node:https';
import { ApiException, type KubeConfig } from '@kubernetes/client-node';
import { ListItemReader } from './list-items.js';

/** client-go's `pager.defaultPageSize`. */
export const DEFAULT_PAGE_SIZE = 500;

/** Longest error body read from a refused request, in bytes (a Status is a few hundred). */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface PagedList {
  /** The collection's path, e.g. `/apis/spiderpool.spidernet.io/v2beta1/spiderippools`. */
  path: string;
  fieldSelector?: string;
  /** Items per page (default {@link DEFAULT_PAGE_SIZE}). */
  limit?: number;
  /** How long one page may take, in milliseconds: past it the request is aborted (a `TimeoutError`). */
  pageTimeoutMs: number;
  /** Each item, in order, as `JSON.parse` gives it. */
  onItem(item: unknown): void;
  /** Aborts the list (the informer's stop). */
  signal?: AbortSignal;
}

/** A page whose `continue` token expired (410 Gone): the list must start over. */
export class ContinueExpiredError extends Error {
  override name = 'ContinueExpiredError';
}

/** What one page's rest (everything but its items) says. */
interface PageMeta {
  resourceVersion?: string;
  continueToken?: string;
  hasItems: boolean;
}

function metaOf(rest: Record<string, unknown>): PageMeta {
  const metadata = (rest['metadata'] ?? {}) as { resourceVersion?: unknown; continue?: unknown };
  return {
    ...(typeof metadata.resourceVersion === 'string' ? { resourceVersion: metadata.resourceVersion } : {}),
    ...(typeof metadata.continue === 'string' && metadata.continue !== '' ? { continueToken: metadata.continue } : {}),
    hasItems: Array.isArray(rest['items']),
  };
}

/** Request options for `config`'s current cluster and user (new for each list: tokens rotate). */
async function requestOptions(config: KubeConfig): Promise<{ server: string; options: https.RequestOptions }> {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const options: https.RequestOptions = {};
  await config.applyToHTTPSOptions(options);
  return { server: cluster.server, options };
}

/** One page, streamed through `reader`. */
function fetchPage(url: URL, options: https.RequestOptions, signal: AbortSignal, reader: ListItemReader): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const get = url.protocol === 'https:' ? https.get : http.get;
    const request = get(url, { ...options, headers: { ...options.headers, Accept: 'application/json' }, signal }, (response) => {
      const code = response.statusCode ?? 0;
      if (code !== 200) {
        const parts: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          if (size < MAX_ERROR_BODY_BYTES) parts.push(chunk);
          size += chunk.length;
        });
        response.on('end', () => {
          const body = Buffer.concat(parts).subarray(0, MAX_ERROR_BODY_BYTES).toString('utf8');
          reject(new ApiException(code, `HTTP ${code}`, body, {}));
        });
        response.on('error', reject);
        return;
      }
      response.on('data', (chunk: Buffer) => {
        try {
          reader.write(chunk);
        } catch (err) {
          request.destroy();
          reject(err);
        }
      });
      response.on('end', () => {
        try {
          resolve(reader.end());
        } catch (err) {
          reject(err);
        }
      });
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

/**
 * Lists every item of `list.path`, page by page.
 *
 * @returns the list's resourceVersion (the last page's), to watch from.
 * @throws ContinueExpiredError when a later page's continue token has expired (410);
 *   an `ApiException` (status code and body) for any other refused page; a `TimeoutError`
 *   or a connection error; a `SyntaxError` for a response that is not a list.
 */
export async function listPages(config: KubeConfig, list: PagedList): Promise<string | undefined> {
  const { server, options } = await requestOptions(config);
  const limit = list.limit ?? DEFAULT_PAGE_SIZE;
  let continueToken: string | undefined;
  for (;;) {
    const url = new URL(server.replace(/\/+$/, '') + list.path);
    url.searchParams.set('limit', String(limit));
    if (list.fieldSelector !== undefined) url.searchParams.set('fieldSelector', list.fieldSelector);
    if (continueToken !== undefined) url.searchParams.set('continue', continueToken);
    const reader = new ListItemReader(list.onItem);
    const timeout = AbortSignal.timeout(list.pageTimeoutMs);
    let meta: PageMeta;
    try {
      meta = metaOf(await fetchPage(url, options, list.signal === undefined ? timeout : AbortSignal.any([timeout, list.signal]), reader));
    } catch (err) {
      if (continueToken !== undefined && err instanceof ApiException && err.code === 410) {
        throw new ContinueExpiredError("the list's continue token expired (410 Gone) before its last page was read; listing again from the start");
      }
      throw err;
    }
    if (!meta.hasItems) throw new SyntaxError(`the answer to ${list.path} is not a list: it has no items array`);
    if (meta.continueToken === undefined) return meta.resourceVersion;
    continueToken = meta.continueToken;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
