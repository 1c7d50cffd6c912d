import https from 'node:https';

/** Where and how to reach a server started by a test: 127.0.0.1:`port`, verified against `ca` for `servername`. */
export interface HttpsTarget {
  port: number;
  ca: string;
  servername: string;
}

/** One request with a JSON content type; resolves with the status and the whole body. */
export function httpsCall(target: HttpsTarget, method: string, pathName: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', ...target, method, path: pathName, headers: { 'content-type': 'application/json' } },
      (res) => {
        let data = '';
        res.on('data', (chunk) => (data += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: data }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
