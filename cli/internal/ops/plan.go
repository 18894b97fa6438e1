package ops

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/planchange"
	"github.com/magos-dev/magos/cli/internal/planrender"
	"github.com/magos-dev/magos/cli/internal/view"
)

// maxPlanJSONBytes bounds the plan JSON `plan show --json` and the summary
// read, as the controller's policy gate bounds it.
const maxPlanJSONBytes = 256 << 20

// PlanGetter reads the plan Secrets of the target's namespace.
func (t *Target) PlanGetter() planstore.Getter {
	return planstore.GetterFunc(func(ctx context.Context, secret string) (*corev1.Secret, error) {
		s := &corev1.Secret{}
		return s, t.Client.Get(ctx, clientKey(t.Key.Namespace, secret), s)
	})
}

// ReadablePlan is plan p rendered for people. A plan that went through
// the gate is rendered from its digest-checked plan JSON (masked as opts
// says), never from the text its run stored. A plan applied without a
// gate has no plan JSON (unless its run had to render one): its stored
// text is shown, marked as not verified.
func ReadablePlan(ctx context.Context, g planstore.Getter, name string, p *magosv1.PlanStatus, opts planrender.Options) (view.Readable, error) {
	if p.AppliedWithoutGate {
		text, err := StoredText(ctx, g, name, p)
		if err != nil || text != "" {
			return view.Readable{Text: text, Source: view.FastTextSource}, err
		}
	}
	stored, err := LoadPlanJSON(ctx, g, name, p)
	if err != nil {
		return view.Readable{}, err
	}
	if len(stored.JSON) == 0 {
		return view.Readable{}, failure.Failed("the stored plan %s of Workspace %s has no plan JSON to render", p.ID, name)
	}
	text, err := planrender.Render(stored.JSON, opts)
	if err != nil {
		return view.Readable{}, failure.Failed("the stored plan %s of Workspace %s cannot be rendered: %v", p.ID, name, err)
	}
	if p.AppliedWithoutGate {
		return view.Readable{Text: text, Source: view.FastJSONSource}, nil
	}
	return view.Readable{Text: text, Verified: true, Source: view.RenderedSource}, nil
}

// StoredText is the text the run stored with plan p, control characters
// removed; "" when it stored none.
func StoredText(ctx context.Context, g planstore.Getter, name string, p *magosv1.PlanStatus) (string, error) {
	stored, err := planstore.LoadTextSealed(ctx, g, name, planstore.MaxTextBytes, p.BundleDigest)
	if errors.Is(err, planstore.ErrNoText) {
		return "", nil
	}
	if err != nil {
		return "", planError(name, err)
	}
	if err := samePlan(stored, p); err != nil {
		return "", err
	}
	return view.Printable(string(stored.Text)), nil
}

// LoadPlanJSON is Workspace name's stored plan with its JSON, sealed and
// checked to be plan p of its status.
func LoadPlanJSON(ctx context.Context, g planstore.Getter, name string, p *magosv1.PlanStatus) (*planstore.Plan, error) {
	stored, err := planstore.LoadJSONSealed(ctx, g, name, maxPlanJSONBytes, p.BundleDigest)
	if err != nil {
		return nil, planError(name, err)
	}
	if err := samePlan(stored, p); err != nil {
		return nil, err
	}
	return stored, nil
}

// samePlan refuses a stored plan other than the one status shows: another
// ID (a new plan being stored) or, for the same ID, another digest.
func samePlan(stored *planstore.Plan, p *magosv1.PlanStatus) error {
	if stored.ID != p.ID {
		return failure.Failed("the stored plan is %s but status shows plan %s: the Workspace is planning again; retry in a moment", stored.ID, p.ID)
	}
	if stored.Digest != p.Digest {
		return failure.Failed("the stored plan %s has digest %s but status records %s: it is not the plan the gate and an approval see; do not approve it", stored.ID, stored.Digest, p.Digest)
	}
	return nil
}

func planError(name string, err error) error {
	if errors.Is(err, planstore.ErrCorrupt) {
		return failure.Failed("the stored plan of Workspace %s is not the one recorded in its status (%v): do not approve it; it is made again before any apply", name, err)
	}
	if errors.Is(err, planstore.ErrNotFound) {
		return failure.NotFound("the plan of Workspace %s is no longer stored (%v); it plans again on its next run", name, err)
	}
	return failure.Failed("reading the plan of Workspace %s: %v", name, err)
}

// LoadChanges reads the change (planchange.Parse) of Workspace ws's
// current stored plan, checked against its status (ID and digest),
// without the ignored top-level attributes, and returns it with the plan
// it read.
func LoadChanges(ctx context.Context, g planstore.Getter, ws *magosv1.Workspace, ignore []string) (planchange.Change, *magosv1.PlanStatus, error) {
	name, p := ws.Name, ws.Status.Plan
	if p == nil {
		return planchange.Change{}, nil, failure.NotFound("Workspace %s has no plan yet (phase %s)", name, view.OrNone(string(ws.Status.Phase)))
	}
	stored, err := LoadPlanJSON(ctx, g, name, p)
	if err != nil {
		return planchange.Change{}, nil, err
	}
	if len(stored.JSON) == 0 {
		return planchange.Change{}, nil, failure.NotFound("plan %s of Workspace %s has no plan JSON to compare (%s)", p.ID, name, noJSONWhy(p))
	}
	c, err := planchange.Parse(stored.JSON, ignore)
	if err != nil {
		return planchange.Change{}, nil, failure.Failed("the plan JSON of Workspace %s does not parse: %v", name, err)
	}
	return c, p, nil
}

// noJSONWhy says why a stored plan has no JSON.
func noJSONWhy(p *magosv1.PlanStatus) string {
	if p.AppliedWithoutGate {
		return "it was planned and applied without a gate in one run, which renders none"
	}
	return "it was stored without one"
}

// AppliedIsCurrent refuses a Workspace whose stored plan is not the one it
// applied last: only one plan per Workspace is stored.
func AppliedIsCurrent(ws *magosv1.Workspace) error {
	la, p := ws.Status.LastApplied, ws.Status.Plan
	switch {
	case la == nil:
		return failure.NotFound("Workspace %s has applied no plan yet", ws.Name)
	case p == nil || p.ID != la.PlanID:
		return failure.Failed("Workspace %s has planned again since it applied plan %s (its plan is now %s), and only its current plan is stored: compare with that one (without --applied)",
			ws.Name, la.PlanID, view.OrNone(planID(p)))
	}
	return nil
}

func planID(p *magosv1.PlanStatus) string {
	if p == nil {
		return ""
	}
	return p.ID
}
