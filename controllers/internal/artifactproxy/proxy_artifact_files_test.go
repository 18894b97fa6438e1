package artifactproxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
)

// TestOnlyArtifactFilesAreServed: source-controller's file server lists
// directories, and a tenant who may write its source's
// status.artifact.url (Flux's flux-edit role allows it) can make a run's
// artifact URL any path under its source's storage. The proxy fetches only
// an artifact file there, <kind>/<namespace>/<name>/<file>.tar.gz: never a
// directory (with or without its trailing slash, which the file server
// redirects to), a deeper path or a query.
func TestOnlyArtifactFilesAreServed(t *testing.T) {
	f := newFixture(t)
	art := f.publish(f.ns, "infra", []byte("this team's configuration"))
	dir := art.URL[:strings.LastIndex(art.URL, "/")+1]
	for i, url := range []string{
		dir,
		strings.TrimSuffix(dir, "/"),
		dir + "sub/" + art.URL[len(dir):],
		art.URL + "?download=1",
		strings.TrimSuffix(art.URL, ".tar.gz"),
	} {
		t.Run(url, func(t *testing.T) {
			ws := f.newWorkspace("files-"+string(rune('a'+i)), "", "infra", nil)
			job := f.newJob(ws, ws.Name+"-plan-1", magosv1.RunPlan, fluxsource.Artifact{URL: url, Revision: art.Revision, Digest: art.Digest})
			f.record(ws, job, nil)
			code, body := f.fetch(f.newPod(job, ""))
			assert.Equal(t, http.StatusForbidden, code, "%s", body)
			assert.NotContains(t, string(body), "<a href", "no directory listing")
		})
	}
}
