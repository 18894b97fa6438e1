// Package statebackend keeps a Workspace's Terraform state in Kubernetes
// without giving the engine any Kubernetes access.
//
// OpenTofu's built-in "kubernetes" backend lists every Secret of the
// namespace during init (to find workspaces), so a runner allowed to use it
// could read every other Workspace's state. Instead the runner serves the
// same storage itself: Server speaks OpenTofu's "http" backend protocol on
// 127.0.0.1 (GET/POST/DELETE /state, LOCK/UNLOCK /lock, 423 Locked with the
// holder's lock info) and stores the state and the lock exactly where, and
// in the layout in which, the kubernetes backend would: gzip'd state JSON
// under key "tfstate" of the state Secret, and the lock in a Lease whose
// holderIdentity is the lock ID, with the lock info JSON in an annotation.
// Every call is a get, create, update or delete by name, never a list.
//
// The engine is pointed at the server by an override file holding an empty
// `backend "http" {}` block and by the TF_HTTP_* environment variables (see
// Server.Env). The address is deliberately not in the block: a saved plan
// records its backend block, and the apply run serves on another port.
package statebackend
