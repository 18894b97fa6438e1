// Package outputs writes a Workspace's Terraform outputs to its outputs
// Secret after an apply: string outputs as their raw value, other types as
// JSON, sensitive ones included (the Secret is the only place values go;
// the run result and the logs carry names only).
package outputs
