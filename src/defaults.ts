/**
 * Names shared by the server, the CLI, the generated certificates and the manifests in
 * `deploy/`. `test/deploy` checks that the manifests agree with these values.
 */

/** URL paths the ValidatingWebhookConfiguration points at (issue #2 interface). */
export const WEBHOOK_PATHS = {
  spiderIPPool: '/validate-spiderippool',
  configMap: '/validate-configmap',
} as const;

/** Port the HTTPS server listens on when neither `--port` nor `PORT` is given. */
export const DEFAULT_PORT = 8443;

/** Service and namespace the manifests in `deploy/` install the webhook as. */
export const DEFAULT_SERVICE_NAME = 'spiderpool-iaas-webhook';
export const DEFAULT_NAMESPACE = 'spiderpool-iaas-webhook';

/** Spiderpool's ConfigMap and its data key (brief: "Spiderpool ConfigMap"). */
export const DEFAULT_CONFIGMAP_NAME = 'spiderpool-conf';
export const CONF_YML_KEY = 'conf.yml';

/** Directory (relative to the working directory) for certificates of a local `npm start`. */
export const DEFAULT_CERT_DIR = 'certs';

/** Largest request body served: the UPDATE of a large pool carries two copies of it. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
