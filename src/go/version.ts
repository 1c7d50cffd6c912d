/**
 * The Go release whose standard library this webhook follows where Go's behaviour changed
 * between releases: Spiderpool's images are built with Go 1.25 (its `go.mod` says
 * `go 1.25`, the image build uses golang 1.25.x) at the Spiderpool commit the conf.yml
 * check follows, main @ a7fbd3b. Change it here when Spiderpool moves to another release;
 * the e2e Go oracle asks for the same release's defaults (`godebug default=go1.25` in
 * test/e2e/oracle/go.mod, checked against this constant).
 */
export const SPIDERPOOL_GO = { major: 1, minor: 25 } as const;

/** The release as Go writes it in a `godebug default=` line: `go1.25`. */
export const SPIDERPOOL_GO_NAME = `go${SPIDERPOOL_GO.major}.${SPIDERPOOL_GO.minor}`;

/** Whether the followed release is `minor` or later (of Go 1). */
export function goAtLeast(minor: number): boolean {
  return SPIDERPOOL_GO.minor >= minor;
}
