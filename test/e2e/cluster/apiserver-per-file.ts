/**
 * One real kube-apiserver for a test file: started before its tests, with its log in a
 * temporary directory, and stopped (the directory removed) after them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from './apiserver.js';

/** A cold start of the API server on two busy cores (see apiserver.ts) plus its clean-up. */
const START_TIMEOUT_MS = 240_000;

/**
 * Registers the start and the stop with jest's `beforeAll`/`afterAll`.
 *
 * @param name names the temporary directory (`<tmp>/<name>-XXXXXX`).
 * @returns the connection to the server as its admin, once `beforeAll` has run.
 */
export function apiServerPerFile(name: string): () => KubeConfig {
  let apiServer: ApiServer | undefined;
  let workDir: string | undefined;
  let kubeConfig: KubeConfig | undefined;
  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), `${name}-`));
    apiServer = await startApiServer(path.join(workDir, 'apiserver.log'));
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(apiServer.kubeconfig);
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await apiServer?.stop();
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  });
  return () => {
    if (kubeConfig === undefined) throw new Error('the API server has not started (beforeAll failed)');
    return kubeConfig;
  };
}
