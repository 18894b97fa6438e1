package ui

import (
	"context"
	"encoding/json"
	"net/http"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
)

// actRequest is an action a page asks for.
type actRequest struct{ Action, Namespace, Name, Plan, Stage, Revision string }

// actResult answers an action.
type actResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// act runs one action through the operation the command that does it
// runs, in the namespace of the object, with the user's credentials: a
// refusal from the apiserver (RBAC, a stale plan ID) comes back as the
// message.
func (s *Server) act(w http.ResponseWriter, r *http.Request) {
	var in actRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, actResult{Message: "bad request: " + err.Error()})
		return
	}
	if s.cfg.Namespace != "" && in.Namespace != s.cfg.Namespace {
		writeJSON(w, http.StatusForbidden, actResult{Message: "this UI serves namespace " + s.cfg.Namespace})
		return
	}
	switch in.Action {
	case "approve", "promote", "replan", "retry", "unlock", "suspend", "resume":
	default:
		writeJSON(w, http.StatusBadRequest, actResult{Message: "unknown action " + in.Action})
		return
	}
	msg, err := s.do(r.Context(), in)
	if err != nil {
		writeJSON(w, http.StatusOK, actResult{Message: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, actResult{OK: true, Message: msg})
}

// do runs a known action and says what it did.
func (s *Server) do(ctx context.Context, in actRequest) (string, error) {
	t, err := s.target(in.Namespace, in.Name)
	if err != nil {
		return "", err
	}
	switch in.Action {
	case "approve":
		a, err := ops.Approve(ctx, t, ops.PlanRef{ID: in.Plan})
		if err != nil {
			return "", err
		}
		return view.Approved(in.Name, a.PlanID, a.User, a.Plan), nil
	case "promote":
		p, err := ops.Promote(ctx, t, in.Stage, in.Revision)
		if err != nil {
			return "", err
		}
		return view.Promoted(in.Name, p), nil
	case "replan", "retry":
		var check func(*magosv1.Workspace) error
		if in.Action == "retry" {
			check = ops.Retryable
		}
		at, err := ops.RequestReconcile(ctx, t, check)
		if err != nil {
			return "", err
		}
		return view.ReconcileRequested(in.Name, at), nil
	case "unlock":
		lock, err := ops.StuckLock(ctx, t)
		if err != nil {
			return "", err
		}
		if err := ops.Unlock(ctx, t, lock.Holder); err != nil {
			return "", err
		}
		return view.LockHeld(in.Name, lock) + "\n" + view.UnlockRequested(in.Name, lock.Holder), nil
	default: // suspend, resume
		kind := magosv1.WorkspaceKind
		if in.Stage == "rollout" {
			kind = magosv1.RolloutKind
		}
		suspend := in.Action == "suspend"
		if err := ops.SetSuspend(ctx, t, kind, suspend); err != nil {
			return "", err
		}
		return view.Suspended(kind, in.Name, suspend), nil
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
