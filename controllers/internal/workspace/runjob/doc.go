// Package runjob is the run contract's Kubernetes side, as pure
// functions: a run (Run) becomes its Job (Job), the ServiceAccounts and
// Role rules of its identities (Identities), and its Pod's spec; a Job
// and its Pod become the run's status (OfJob, Finished, FailureReason,
// OutOfMemory, RunnerEnd). It reads and writes nothing: the
// workspace-controller's reconciler does the I/O.
package runjob
