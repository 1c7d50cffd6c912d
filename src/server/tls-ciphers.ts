/**
 * TLS 1.2 and 1.3 with forward-secret AEAD suites only: Mozilla's "intermediate" list
 * without DHE (Node offers DHE only with configured dhparams). The kube-apiserver (Go's
 * crypto/tls) negotiates TLS 1.3 or ECDHE-*-AES-GCM / CHACHA20. The TLS 1.3 names must be
 * listed: a cipher list without them turns TLS 1.3 off in Node. A module of its own so the
 * benchmark's reference servers use the same list without loading the server.
 */
export const TLS_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/** The oldest TLS version served. */
export const TLS_MIN_VERSION = 'TLSv1.2';
