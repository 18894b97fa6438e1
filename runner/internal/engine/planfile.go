package engine

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// planLockFile is the dependency lock file a saved plan carries: the
// providers, with their versions and checksums, that init installed for
// the plan.
const planLockFile = ".terraform.lock.hcl"

// maxPlanLockBytes bounds the lock file read from a plan; a lock file of a
// thousand providers is a few hundred KiB.
const maxPlanLockBytes = 4 << 20

// PlanNeedsProviders reports whether the saved plan planBinary was made
// with providers that init had to install, from the dependency lock file
// the plan carries. A plan of built-in providers only (terraform_data,
// terraform_remote_state) needs none: its apply has nothing to initialise,
// since the plan file also carries the configuration and its modules and
// the backend configuration. An unreadable plan or lock is an error;
// callers then initialise as usual.
//
// The answer only decides whether the apply runs init first. Whatever it
// says, the engine still checks the installed providers against the plan's
// lock, and the runner that the plan renders to the approved digest: a
// lock that lies makes the apply fail, never apply something else.
func PlanNeedsProviders(planBinary []byte) (bool, error) {
	zr, err := zip.NewReader(bytes.NewReader(planBinary), int64(len(planBinary)))
	if err != nil {
		return false, fmt.Errorf("reading the saved plan: %w", err)
	}
	for _, f := range zr.File {
		if f.Name != planLockFile {
			continue
		}
		if f.UncompressedSize64 > maxPlanLockBytes {
			return false, fmt.Errorf("the saved plan's %s is %d bytes, over %d", planLockFile, f.UncompressedSize64, maxPlanLockBytes)
		}
		rc, err := f.Open()
		if err != nil {
			return false, fmt.Errorf("reading the saved plan's %s: %w", planLockFile, err)
		}
		defer rc.Close()
		return locksProviders(io.LimitReader(rc, maxPlanLockBytes))
	}
	// A plan without a lock file comes from an engine that does not write
	// one into its plans: assume it needs init.
	return true, nil
}

// locksProviders reports whether a dependency lock file holds a provider
// block. The engine writes one `provider "<address>" {` line per provider.
func locksProviders(r io.Reader) (bool, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxPlanLockBytes)
	for sc.Scan() {
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), "provider") {
			return true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("reading the saved plan's %s: %w", planLockFile, err)
	}
	return false, nil
}
