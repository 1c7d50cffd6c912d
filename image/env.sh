# Sourced by the image scripts: podman and buildah read this project's configuration
# instead of /etc/containers.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export CONTAINERS_CONF="$here/containers.conf"
export CONTAINERS_STORAGE_CONF="$here/storage.conf"
# The local base images and the webhook image built from them (a release names its own).
export BASE_REPO=localhost/spiderpool-iaas-webhook-base
export WEBHOOK_IMAGE=${WEBHOOK_IMAGE:-localhost/spiderpool-iaas-webhook:ci}
