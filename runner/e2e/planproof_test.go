package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/encoding/protowire"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

// A configuration whose local shows in no plan JSON: `show -json` renders
// the provisioner's command as references (local.word, self.id), not as
// the value the apply runs.
const provisionerConfig = `
locals {
  word = "harmless"
}

module "child" {
  source = "./modules/child"
}

resource "terraform_data" "cmd" {
  input = module.child.size
  provisioner "local-exec" {
    command = "echo ${local.word} ${self.id}"
  }
}
`

const childConfig = `
output "size" {
  value = 3
}
`

// The apply applies the stored binary plan, and the engine takes the
// configuration it evaluates and the backend it writes the state to from
// the plan file, not from the artifact. Neither shows in the plan JSON
// whose digest is approved: a plan file with another local (here the
// provisioner's command) or another backend renders to the same digest.
// The apply refuses both, refuses a plan file with an entry twice (the
// engine reads the first tfplan, so an edited one put first would apply),
// and refuses a stored plan rewritten after the controller recorded its
// bundle digest.
func TestRunnerAppliesOnlyThePlanOfTheVerifiedConfiguration(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	bin := buildRunner(t)
	ns := env.NewNamespace(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	secrets := cs.CoreV1().Secrets(ns)
	url, digest := serve(t, tarGz(t, map[string]string{
		"infra/":                       "",
		"infra/main.tf":                provisionerConfig,
		"infra/modules/":               "",
		"infra/modules/child/":         "",
		"infra/modules/child/main.tf":  childConfig,
		"infra/modules/child/notes.md": "not configuration",
	}))
	const ws, uid = "proof", "0b6a3f5e-7d51-4c1a-9a0e-2f4c8f1d9e21"
	reserve(t, ns, ws, uid, "")
	vars := func(planDigest, bundle string) map[string]string {
		return map[string]string{
			"KUBECONFIG":                env.Kubeconfig,
			magosv1.EnvNamespace:        ns,
			magosv1.EnvWorkspace:        ws,
			magosv1.EnvWorkspaceUID:     uid,
			magosv1.EnvArtifactURL:      url,
			magosv1.EnvArtifactDigest:   digest,
			magosv1.EnvPath:             "infra",
			magosv1.EnvEngine:           "opentofu",
			magosv1.EnvEngineVersion:    "1.10.6",
			magosv1.EnvVersionsDir:      versionsDir(t),
			magosv1.EnvPlanID:           "plan-1",
			magosv1.EnvPlanDigest:       planDigest,
			magosv1.EnvPlanBundleDigest: bundle,
			magosv1.EnvStateSecret:      magosv1.StateSecretName(ws),
			magosv1.EnvLockLease:        magosv1.LockLeaseName(ws),
		}
	}
	stateWritten := func() bool {
		s, err := secrets.Get(ctx, magosv1.StateSecretName(ws), metav1.GetOptions{})
		require.NoError(t, err)
		return len(s.Data[magosv1.StateKey]) > 0
	}

	plan := runRunner(t, bin, magosv1.RunPlan, vars("", ""))
	require.Equal(t, 0, plan.code, plan.output)
	approved := plan.result.PlanDigest
	original, err := planstore.Load(ctx, secrets, ws)
	require.NoError(t, err)
	require.NotContains(t, string(original.JSON), "harmless", "the local's value is not in the plan JSON")

	// store replaces the stored plan's binary, keeping its ID, JSON and
	// text, as anything that can write the plan Secrets can, and returns
	// the new bundle digest.
	store := func(binary []byte) string {
		meta, err := planstore.Store(ctx, secrets, planstore.Input{
			Workspace: ws, Owner: planstore.WorkspaceOwner(ws, uid), ID: original.ID,
			JSON: original.JSON, Text: original.Text, Binary: binary,
		})
		require.NoError(t, err)
		require.Equal(t, approved, meta.Digest)
		return meta.SHA256
	}
	apply := func(bundle string) execution {
		e := runRunner(t, bin, magosv1.RunApply, vars(approved, bundle))
		t.Logf("apply: exit %d, result %s\n%s", e.code, e.raw, e.output)
		return e
	}

	t.Run("a plan whose snapshot changed a local is refused", func(t *testing.T) {
		swapped := rewritePlanFile(t, original.Binary, "tfconfig/m-/main.tf", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"harmless"`), []byte(`"harmful"`), 1)
		})
		e := apply(store(swapped))
		assert.Equal(t, magosv1.ResultFailed, e.result.Result)
		assert.Equal(t, magosv1.ReasonPlanBinaryMismatch, e.result.Reason)
		assert.Contains(t, e.result.Message, "main.tf of module (root) differs from the configuration")
		assert.NotContains(t, e.output, "harmful", "the swapped command never ran")
		assert.False(t, stateWritten(), "nothing was applied")
	})

	t.Run("a plan whose module snapshot gained a file is refused", func(t *testing.T) {
		swapped := addPlanFileEntry(t, original.Binary, "tfconfig/m-child/extra.tf", []byte("locals {\n  x = 1\n}\n"))
		e := apply(store(swapped))
		assert.Equal(t, magosv1.ReasonPlanBinaryMismatch, e.result.Reason)
		assert.Contains(t, e.result.Message, `module "child" has files extra.tf, main.tf in the plan, main.tf in the configuration`)
		assert.False(t, stateWritten(), "nothing was applied")
	})

	t.Run("a plan whose backend sends the state elsewhere is refused", func(t *testing.T) {
		swapped := rewritePlanFile(t, original.Binary, "tfplan", func(b []byte) []byte {
			return setBackendAttribute(t, b, "address", "http://127.0.0.1:9/collect")
		})
		e := apply(store(swapped))
		assert.Equal(t, magosv1.ReasonPlanBinaryMismatch, e.result.Reason)
		assert.Contains(t, e.result.Message, "its http backend sets address")
		assert.False(t, stateWritten(), "nothing was applied")
	})

	t.Run("a plan with an edited tfplan before the original entries is refused", func(t *testing.T) {
		// The engine reads the first tfplan of a plan file. An edited one
		// (its backend sending the state to collector) put before every
		// original entry renders the approved JSON, since show -json reads
		// it too; a check that read the last tfplan would see the
		// runner's backend.
		var received atomic.Int32
		collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			received.Add(1)
			w.WriteHeader(http.StatusOK)
		}))
		defer collector.Close()
		edited := setBackendAttribute(t, planFileEntry(t, original.Binary, "tfplan"), "address", collector.URL+"/collect")
		e := apply(store(prependPlanFileEntry(t, original.Binary, "tfplan", edited)))
		assert.Equal(t, magosv1.ResultFailed, e.result.Result)
		assert.Equal(t, magosv1.ReasonPlanBinaryMismatch, e.result.Reason)
		assert.Contains(t, e.result.Message, `entry "tfplan" appears twice`)
		assert.Contains(t, e.result.Message, "nothing was applied")
		assert.Zero(t, received.Load(), "nothing reached the other backend")
		assert.False(t, stateWritten(), "nothing was applied")
	})

	t.Run("a stored plan rewritten after it was recorded is not applied", func(t *testing.T) {
		recorded := store(original.Binary)
		store(addPlanFileEntry(t, original.Binary, "tfconfig/m-/zz.tf", []byte("locals {\n  y = 2\n}\n")))
		e := apply(recorded)
		assert.Equal(t, magosv1.ResultFailed, e.result.Result)
		assert.Equal(t, magosv1.ReasonPlanBinaryMismatch, e.result.Reason)
		assert.Contains(t, e.result.Message, "it was rewritten since")
		assert.False(t, stateWritten(), "nothing was applied")

		e = apply("")
		assert.Equal(t, magosv1.ResultStale, e.result.Result)
		assert.Equal(t, magosv1.ReasonPlanDigestMismatch, e.result.Reason, "an apply without a recorded bundle digest plans again")
	})

	t.Run("the plan as made is applied", func(t *testing.T) {
		e := apply(store(original.Binary))
		require.Equal(t, 0, e.code, e.output)
		assert.Contains(t, e.output, "harmless")
		assert.True(t, stateWritten())
	})
}

// rewritePlanFile returns the plan file with entry name replaced by
// edit(its bytes); the other entries are copied as they are.
func rewritePlanFile(t *testing.T, planFile []byte, name string, edit func([]byte) []byte) []byte {
	t.Helper()
	return copyPlanFile(t, planFile, func(e *zip.File, data []byte) []byte {
		if e.Name == name {
			changed := edit(data)
			require.NotEqual(t, data, changed, "the edit of %s changes it", name)
			return changed
		}
		return data
	}, nil)
}

// addPlanFileEntry returns the plan file with one more entry.
func addPlanFileEntry(t *testing.T, planFile []byte, name string, data []byte) []byte {
	t.Helper()
	return copyPlanFile(t, planFile, func(_ *zip.File, d []byte) []byte { return d }, map[string][]byte{name: data})
}

// planFileEntry returns the bytes of entry name of the plan file.
func planFileEntry(t *testing.T, planFile []byte, name string) []byte {
	t.Helper()
	var found []byte
	copyPlanFile(t, planFile, func(e *zip.File, data []byte) []byte {
		if e.Name == name {
			found = data
		}
		return data
	}, nil)
	require.NotNil(t, found, "the plan file has %s", name)
	return found
}

// prependPlanFileEntry returns the plan file with an entry put before
// every original one (whose names may include name).
func prependPlanFileEntry(t *testing.T, planFile []byte, name string, data []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(planFile), int64(len(planFile)))
	require.NoError(t, err)
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	for _, e := range zr.File {
		require.NoError(t, zw.Copy(e))
	}
	require.NoError(t, zw.Close())
	return out.Bytes()
}

func copyPlanFile(t *testing.T, planFile []byte, edit func(*zip.File, []byte) []byte, extra map[string][]byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(planFile), int64(len(planFile)))
	require.NoError(t, err)
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, e := range zr.File {
		rc, err := e.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.Name, Method: zip.Deflate, Modified: e.Modified})
		require.NoError(t, err)
		_, err = w.Write(edit(e, data))
		require.NoError(t, err)
	}
	for name, data := range extra {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return out.Bytes()
}

// setBackendAttribute sets one attribute of the backend configuration in
// the plan protobuf (Plan.backend = 13, Backend.config = 2,
// DynamicValue.msgpack = 1), keeping every other field.
func setBackendAttribute(t *testing.T, plan []byte, name, value string) []byte {
	t.Helper()
	return rewriteField(t, plan, 13, func(backend []byte) []byte {
		return rewriteField(t, backend, 2, func(dynamic []byte) []byte {
			return rewriteField(t, dynamic, 1, func(packed []byte) []byte {
				var config map[string]any
				require.NoError(t, msgpack.Unmarshal(packed, &config))
				require.Contains(t, config, name)
				config[name] = value
				out, err := msgpack.Marshal(config)
				require.NoError(t, err)
				return out
			})
		})
	})
}

// rewriteField replaces the bytes of the length-delimited field num of a
// protobuf message with edit(them).
func rewriteField(t *testing.T, msg []byte, num protowire.Number, edit func([]byte) []byte) []byte {
	t.Helper()
	var out []byte
	found := false
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		require.GreaterOrEqual(t, l, 0)
		size := protowire.ConsumeFieldValue(n, typ, msg[l:])
		require.GreaterOrEqual(t, size, 0)
		if n == num && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(msg[l:])
			out = protowire.AppendTag(out, n, typ)
			out = protowire.AppendBytes(out, edit(v))
			found = true
		} else {
			out = append(out, msg[:l+size]...)
		}
		msg = msg[l+size:]
	}
	require.True(t, found, "field %d is in the message", num)
	return out
}
