// Package testenv is the one test environment every Magos test package
// uses: a real kube-apiserver and etcd (built by `make tools` into bin/k8s)
// started once per package through controller-runtime's envtest, with the
// Magos CRDs, Flux's source CRDs and Kyverno's ValidatingPolicy CRDs
// installed, and a fresh namespace per test.
//
//	var env *testenv.Environment
//
//	func TestMain(m *testing.M) { testenv.Main(m, &env) }
//
// With -short (`make test-unit`) the environment is not started: pure tests
// run, and tests that need it skip (env.NewNamespace, env.StartManager and
// env.Require skip on a nil environment).
package testenv
