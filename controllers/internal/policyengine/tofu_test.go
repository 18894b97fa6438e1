package policyengine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/magos-dev/magos/tools/harness/testenv"
)

// planCache keeps each generated plan JSON for the whole test binary:
// several tests evaluate the same configuration.
var planCache sync.Map // config digest -> []byte

// tofuBinary is the real OpenTofu under the repository root (testenv.Tofu).
func tofuBinary(tb testing.TB) string { return testenv.Tofu(tb) }

// plan returns the JSON of a real plan of mainTF (`tofu init`, `plan -out`,
// `show -json`, with local state in a temporary directory).
func plan(tb testing.TB, mainTF string) []byte {
	tb.Helper()
	return cachedPlan(tb, "plan", mainTF, func(tofu func(args ...string) []byte) []byte {
		tofu("init", "-input=false")
		tofu("plan", "-input=false", "-out=plan.bin")
		return tofu("show", "-json", "plan.bin")
	})
}

// destroyPlan applies mainTF, then returns the JSON of a real plan that
// destroys it (`plan -destroy`).
func destroyPlan(tb testing.TB, mainTF string) []byte {
	tb.Helper()
	return cachedPlan(tb, "destroy", mainTF, func(tofu func(args ...string) []byte) []byte {
		tofu("init", "-input=false")
		tofu("apply", "-input=false", "-auto-approve")
		tofu("plan", "-destroy", "-input=false", "-out=plan.bin")
		return tofu("show", "-json", "plan.bin")
	})
}

// replacePlan applies before, then returns the JSON of a real plan that
// changes the configuration to after.
func replacePlan(tb testing.TB, before, after string) []byte {
	tb.Helper()
	return cachedPlan(tb, "change", before+"\x00"+after, func(tofu func(args ...string) []byte) []byte {
		tofu("init", "-input=false")
		tofu("apply", "-input=false", "-auto-approve")
		tofu("writemain", after)
		tofu("plan", "-input=false", "-out=plan.bin")
		return tofu("show", "-json", "plan.bin")
	})
}

// planOf, destroyPlanOf and changePlanOf defer plan, destroyPlan and
// replacePlan to the (sub)test that needs the plan.
func planOf(tf string) func(testing.TB) []byte {
	return func(tb testing.TB) []byte { return plan(tb, tf) }
}

func destroyPlanOf(tf string) func(testing.TB) []byte {
	return func(tb testing.TB) []byte { return destroyPlan(tb, tf) }
}

func changePlanOf(before, after string) func(testing.TB) []byte {
	return func(tb testing.TB) []byte { return replacePlan(tb, before, after) }
}

// cachedPlan runs steps in a fresh directory holding main.tf (the part of
// config before any NUL) unless the same kind and config ran before.
func cachedPlan(tb testing.TB, kind, config string, steps func(tofu func(args ...string) []byte) []byte) []byte {
	tb.Helper()
	sum := sha256.Sum256([]byte(kind + "\x00" + config))
	key := hex.EncodeToString(sum[:])
	if out, ok := planCache.Load(key); ok {
		return out.([]byte)
	}
	bin := tofuBinary(tb)
	dir := tb.TempDir()
	mainTF, _, _ := bytes.Cut([]byte(config), []byte{0})
	writeMain := func(content []byte) {
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), content, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	writeMain(mainTF)
	cliConfig := filepath.Join(dir, "tofurc")
	if err := os.WriteFile(cliConfig, nil, 0o600); err != nil {
		tb.Fatal(err)
	}
	tofu := func(args ...string) []byte {
		if args[0] == "writemain" {
			writeMain([]byte(args[1]))
			return nil
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(),
			"TF_CLI_CONFIG_FILE="+cliConfig,
			"TF_IN_AUTOMATION=1",
			"TF_INPUT=0",
			"CHECKPOINT_DISABLE=1",
		)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			tb.Fatalf("tofu %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
		}
		return stdout.Bytes()
	}
	out := steps(tofu)
	planCache.Store(key, out)
	return out
}
