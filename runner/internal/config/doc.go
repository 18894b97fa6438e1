// Package config reads a run's parameters from the MAGOS_* environment
// variables that the workspace-controller sets on the runner container (see
// the run contract in apis/magos/v1alpha1) and checks them before anything
// is fetched or executed.
package config
