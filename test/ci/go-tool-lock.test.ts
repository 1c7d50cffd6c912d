/**
 * `.ci/go-tool` called twice at once for one tool (CI builds tools in the background while
 * the tests call the same script): one build, and both callers print the built directory.
 * `go` is a stub on PATH that counts its installs and takes a second, so the calls overlap;
 * nothing is downloaded or compiled.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const GO_TOOL = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../.ci/go-tool');
/** Each call waits at least one of go-tool's 5 s polls; this bounds a hung lock. */
const CALL_TIMEOUT_MS = 60_000;

/** `go version` answers; `go install` appends a line to $COUNT, sleeps 1 s, writes $GOBIN/stub. */
const STUB_GO = `#!/bin/sh
case $1 in
  version) echo "go version go0.0-stub linux/amd64" ;;
  install) echo build >>"$COUNT"; sleep 1; printf '#!/bin/sh\\n' >"$GOBIN/stub"; chmod +x "$GOBIN/stub" ;;
  *) exit 1 ;;
esac
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ci-go-tool-'));
  await writeFile(path.join(dir, 'go'), STUB_GO);
  await chmod(path.join(dir, 'go'), 0o755);
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** One go-tool call of the stub tool; resolves with its exit code and stdout. */
function goTool(): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(GO_TOOL, ['stub', 'example.com/stub@v1.0.0', 'example.com/stub/cmd/stub'], {
      env: { ...process.env, PATH: `${dir}:${process.env['PATH']}`, COUNT: path.join(dir, 'count'), E2E_APISERVER_CACHE: path.join(dir, 'cache') },
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: CALL_TIMEOUT_MS,
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

it(
  'two concurrent calls build once and both print the built directory',
  async () => {
    const [a, b] = await Promise.all([goTool(), goTool()]);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(a.stdout).toMatch(/\/go-tools\/stub-[0-9a-f]{16}\n$/);
    expect((await readFile(path.join(dir, 'count'), 'utf8')).split('\n').filter(Boolean)).toHaveLength(1);
    expect((await readFile(path.join(a.stdout.trim(), 'stub'), 'utf8')).startsWith('#!/bin/sh')).toBe(true);
  },
  2 * CALL_TIMEOUT_MS,
);
