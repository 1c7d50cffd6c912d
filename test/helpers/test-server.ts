/**
 * The webhook's HTTPS server as the server tests start it: on an OS-chosen port of
 * 127.0.0.1, with a CA and serving certificate generated into a fresh temporary folder.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startServer, type RunningServer, type ServeOptions } from '../../src/server/serve.js';

/** A started server, its certificate folder, and a `stop()` that also removes the folder. */
export interface TestServer extends RunningServer {
  certDir: string;
}

/**
 * Starts the server in a new folder named `<prefix>…` under the OS temporary directory,
 * silent unless `options` gives a logger; `options` override the rest too.
 *
 * @throws what `startServer` throws, after removing the folder.
 */
export async function startTestServer(prefix: string, options: Partial<Omit<ServeOptions, 'certDir'>> = {}): Promise<TestServer> {
  const certDir = await mkdtemp(join(tmpdir(), prefix));
  const removeDir = () => rm(certDir, { recursive: true, force: true });
  try {
    const server = await startServer({ port: 0, host: '127.0.0.1', certDir, generateCerts: true, logger: pino({ level: 'silent' }), ...options });
    const stop = async () => {
      await server.stop();
      await removeDir();
    };
    return { ...server, certDir, stop };
  } catch (err) {
    await removeDir();
    throw err;
  }
}
