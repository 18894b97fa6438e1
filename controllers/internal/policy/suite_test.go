package policy_test

import (
	"testing"

	"github.com/magos-dev/magos/tools/harness/testenv"
)

// env is the package's real apiserver, with Kyverno's ValidatingPolicy and
// NamespacedValidatingPolicy CRDs installed.
var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }
