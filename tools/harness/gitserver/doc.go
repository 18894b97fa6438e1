// Package gitserver serves Git repositories to tests over the two
// transports a private Terraform module source uses with credentials:
// smart HTTP with basic authentication (git http-backend behind
// net/http/cgi) and SSH with a public key (git-upload-pack over an
// x/crypto/ssh server). Both refuse a client without the credentials, and
// count the refusals, so a test can prove a fetch really authenticated.
//
//	srv, err := gitserver.New(t.TempDir(), "magos", password)
//	commit, err := srv.Publish("modules", "testdata/module")
//	go srv.ServeHTTP(httpListener) // http://magos:<password>@host/modules.git
//	go srv.ServeSSH(sshListener)   // ssh://git@host:port/modules.git
//
// It needs the git binary on PATH.
package gitserver
