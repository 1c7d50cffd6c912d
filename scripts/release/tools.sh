# Sourced by the release scripts and .ci/run: the Go tools of a release, each built once by
# .ci/go-tool (cached outside the clone) unless $HELM, $COSIGN or $CRANE names a binary.
#   release_tool helm|cosign|crane   prints the binary's path (a cold build takes minutes)
RELEASE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Versions the Go module proxy serves here; helm's is test/e2e/helm.ts's HELM_MODULE.
COSIGN_MODULE=github.com/sigstore/cosign/v2@v2.6.5
CRANE_MODULE=github.com/google/go-containerregistry@v0.22.1
HELM_MODULE=$(sed -n "s/^export const HELM_MODULE = '\(.*\)';.*/\1/p" "$RELEASE_ROOT/test/e2e/helm.ts")

release_tool() {
  local name=$1 module pkg dir
  case $name in
    helm) [[ -z ${HELM:-} ]] || { echo "$HELM"; return; }; module=$HELM_MODULE; pkg=${HELM_MODULE%@*}/cmd/helm ;;
    cosign) [[ -z ${COSIGN:-} ]] || { echo "$COSIGN"; return; }; module=$COSIGN_MODULE; pkg=${COSIGN_MODULE%@*}/cmd/cosign ;;
    crane) [[ -z ${CRANE:-} ]] || { echo "$CRANE"; return; }; module=$CRANE_MODULE; pkg=${CRANE_MODULE%@*}/cmd/crane ;;
    *) echo "release_tool: unknown tool $name" >&2; return 2 ;;
  esac
  dir=$("$RELEASE_ROOT/.ci/go-tool" "$name" "$module" "$pkg") && echo "$dir/$name"
}
