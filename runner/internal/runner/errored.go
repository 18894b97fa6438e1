package runner

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/runner/internal/engine"
	"github.com/magos-dev/magos/runner/internal/report"
	"github.com/magos-dev/magos/runner/internal/statebackend"
)

// erroredStateFile is where OpenTofu and Terraform write the state they
// could not persist to the backend after changing real resources, in their
// working directory.
const erroredStateFile = "errored.tfstate"

// saveTimeout bounds saving errored state; it runs also after the run was
// interrupted, inside the Pod's grace period (magosv1.ShutdownMargin).
const saveTimeout = 15 * time.Second

// saveErroredState looks, after command failed, for the state the engine
// could not write back. Without one it returns nil and the failure is
// reported as it is. With one, real resources changed that the state Secret
// does not record: the state is saved to the Secret the controller
// reserved for it and the run fails with StateNotSaved, which the
// controller holds the Workspace on until someone restores the state.
func (r *runner) saveErroredState(ctx context.Context, configDir, command string, engineErr error) error {
	state, err := readBounded(filepath.Join(configDir, erroredStateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	why := engine.Summary(engineErr)
	if r.backend != nil {
		if berr := r.backend.LastError(); berr != nil {
			why += fmt.Sprintf(" (state backend: %v)", berr)
		}
	}
	lost := func(cause error) error {
		r.log.Error("The state the engine could not write back could not be saved either", "error", cause)
		return report.Failed(magosv1.ReasonStateNotSaved, fmt.Errorf(
			"%s changed real resources but could not write the state back (%s), and saving the engine's errored state failed too: %v; "+
				"the state no longer records every resource: import them or remove them by hand before the next run",
			command, why, cause))
	}
	if err != nil {
		return lost(err)
	}
	if r.cfg.ErroredStateSecret == "" {
		return lost(errors.New("no Secret was reserved for it"))
	}
	// The run may be interrupted already; saving still gets its own time.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	if err := r.putErroredState(sctx, state); err != nil {
		return lost(err)
	}
	r.log.Info("Saved the state the engine could not write back", "secret", r.cfg.ErroredStateSecret)
	r.result.ErroredState = r.cfg.ErroredStateSecret
	return report.Failed(magosv1.ReasonStateNotSaved, fmt.Errorf(
		"%s changed real resources but could not write the state back to Secret %s (%s); the engine's state was saved to Secret %s",
		command, r.cfg.StateSecret, why, r.cfg.ErroredStateSecret))
}

// putErroredState writes state, gzip'd, under the state key of the
// errored-state Secret, the layout of the state Secret itself.
func (r *runner) putErroredState(ctx context.Context, state []byte) error {
	gz, err := gzipBytes(state)
	if err != nil {
		return err
	}
	if len(gz) > magosv1.MaxStateSecretBytes {
		return fmt.Errorf("the state is %d bytes gzip'd, more than a Secret holds (%d)", len(gz), magosv1.MaxStateSecretBytes)
	}
	secrets := r.kube.CoreV1().Secrets(r.cfg.Namespace)
	sec, err := secrets.Get(ctx, r.cfg.ErroredStateSecret, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading Secret %s: %w", r.cfg.ErroredStateSecret, err)
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	if sec.Annotations == nil {
		sec.Annotations = map[string]string{}
	}
	sec.Data[magosv1.StateKey] = gz
	sec.Annotations["encoding"] = "gzip"
	sec.Annotations[magosv1.ErroredStateRunIDAnnotation] = r.cfg.RunID
	sec.Annotations[magosv1.ErroredStateSavedAtAnnotation] = time.Now().UTC().Format(time.RFC3339)
	if _, err := secrets.Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing Secret %s: %w", r.cfg.ErroredStateSecret, err)
	}
	return nil
}

// checkStateSize fails an apply, before it applies anything, whose
// resulting state would not fit the state Secret: the engine would change
// real resources and then fail to record them. The estimate is the gzip'd
// size of the plan's planned values (every resource's attributes after the
// apply, values known only after it left out).
func checkStateSize(planJSON []byte) error {
	var plan struct {
		PlannedValues json.RawMessage `json:"planned_values"`
	}
	if err := json.Unmarshal(planJSON, &plan); err != nil {
		return report.Failed(magosv1.ReasonApplyFailed, fmt.Errorf("reading the plan JSON: %w", err))
	}
	gz, err := gzipBytes(plan.PlannedValues)
	if err != nil {
		return report.Failed(magosv1.ReasonApplyFailed, err)
	}
	if len(gz) > magosv1.MaxStateSecretBytes {
		return report.Failed(magosv1.ReasonStateTooLarge, fmt.Errorf(
			"the state after this apply would be at least %d bytes gzip'd, more than the state Secret holds (%d); nothing was applied: "+
				"split the configuration into smaller Workspaces or use a backend of your own (spec.backend)",
			len(gz), magosv1.MaxStateSecretBytes))
	}
	return nil
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readBounded reads a file of at most statebackend.MaxStateBytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, statebackend.MaxStateBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > statebackend.MaxStateBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", erroredStateFile, statebackend.MaxStateBytes)
	}
	return b, nil
}
