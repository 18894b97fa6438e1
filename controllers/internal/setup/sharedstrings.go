package setup

import (
	"sync"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Workspaces hold many strings alike: every Workspace of a namespace its
// namespace, every Workspace of a source its artifact's URL, revision and
// digest, and, once they applied it, the same revision in their plan, last
// apply and run, and the same condition reasons and messages. The JSON
// decoder gives each its own copy, so at thousands of Workspaces the
// copies are a large part of the cache. trimWorkspace keeps one copy of
// each such string (sharedStrings) for the Workspaces in the cache; what
// each Workspace holds alone (its name, its inputs digest) is left as it
// is.

// sharedStrings keeps one copy of each string it is given. It holds at
// most max strings and forgets them all when full (the strings already
// shared stay shared), so strings no Workspace holds any more (old
// revisions, old messages) are not kept for ever.
type sharedStrings struct {
	mu   sync.Mutex
	max  int
	seen map[string]string
}

// share is s's shared copy.
func (p *sharedStrings) share(s *string) {
	if *s == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.seen[*s]; ok {
		*s = v
		return
	}
	if p.seen == nil || len(p.seen) >= p.max {
		p.seen = make(map[string]string, min(p.max, 1024))
	}
	p.seen[*s] = *s
}

// workspaceStrings are the Workspaces' shared strings: a few thousand
// namespaces, sources, revisions and messages.
var workspaceStrings = &sharedStrings{max: 16384}

// metadataStrings are the strings every cached object's metadata holds
// alike (shareMetadata): namespaces, label and annotation keys, owners'
// API versions and kinds, finalizers.
var metadataStrings = &sharedStrings{max: 4096}

// shareMetadata shares what objects of many Workspaces hold alike in their
// metadata: the namespace, the keys of labels and annotations (each run's
// Job and Pod carry the same eight or so), the owners' API versions and
// kinds and the finalizers. Names, UIDs and values stay each object's own.
func shareMetadata(obj metav1.Object) {
	p := metadataStrings
	ns := obj.GetNamespace()
	p.share(&ns)
	obj.SetNamespace(ns)
	shareKeys(p, obj.GetLabels())
	shareKeys(p, obj.GetAnnotations())
	owners := obj.GetOwnerReferences()
	for i := range owners {
		p.share(&owners[i].APIVersion)
		p.share(&owners[i].Kind)
	}
	fin := obj.GetFinalizers()
	for i := range fin {
		p.share(&fin[i])
	}
}

// shareKeys replaces m's keys with their shared copies, in place.
func shareKeys(p *sharedStrings, m map[string]string) {
	if len(m) == 0 {
		return
	}
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	for _, k := range keys {
		shared := k
		p.share(&shared)
		if unsafe.StringData(shared) != unsafe.StringData(k) {
			v := m[k]
			delete(m, k)
			m[shared] = v
		}
	}
}

// trimWorkspace is the cache transform of Workspaces: the metadata as
// trimMetadata keeps it, with the strings Workspaces hold alike shared
// (workspaceStrings). Nothing changes but where the bytes are.
func trimWorkspace(obj any) (any, error) {
	ws, ok := obj.(*magosv1.Workspace)
	if !ok {
		return trimMetadata(obj)
	}
	_, _ = trimMetadata(ws)
	p := workspaceStrings
	p.share(&ws.Spec.SourceRef.Kind)
	p.share(&ws.Spec.SourceRef.Name)
	p.share(&ws.Spec.Path)
	if ws.Spec.ProjectRef != nil {
		p.share(&ws.Spec.ProjectRef.Name)
	}
	st := &ws.Status
	for i := range st.Conditions {
		c := &st.Conditions[i]
		p.share(&c.Type)
		p.share((*string)(&c.Status))
		p.share(&c.Reason)
		p.share(&c.Message)
	}
	p.share((*string)(&st.Phase))
	if s := st.Source; s != nil {
		p.share(&s.URL)
		p.share(&s.Revision)
		p.share(&s.Digest)
	}
	if pl := st.Plan; pl != nil {
		p.share(&pl.Revision)
		p.share(&pl.PlannedRevision)
		p.share(&pl.Digest)
		p.share(&pl.BundleDigest)
		p.share(&pl.ContentDigest)
	}
	if a := st.LastApplied; a != nil {
		p.share(&a.Revision)
	}
	if r := st.CurrentRun; r != nil {
		p.share(&r.Phase)
		p.share(&r.Result)
		p.share(&r.Revision)
		p.share(&r.ContentDigest)
		p.share(&r.Reason)
		p.share(&r.Message)
	}
	return ws, nil
}
