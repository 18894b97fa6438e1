// Package ui is the local web UI of `kubectl magos ui`: it serves pages
// and actions on the user's own machine, acting with the user's own
// kubeconfig, so the apiserver's RBAC decides everything; nothing is
// installed in the cluster. Its pages are package view's view model in
// the templates of files/; its actions are package ops's operations, the
// same code as the commands.
//
// It listens on loopback only (another address needs --allow-remote, the
// command's check) and answers only requests for its own host:port. The
// URL it prints carries a random code, exchanged once and within minutes
// for a session cookie (HttpOnly, SameSite=Strict, named for the port);
// every request needs the cookie, and the session never appears in a
// URL. Every write is a POST that must carry the page's CSRF token in a
// header and come from the UI's own origin (Origin and Sec-Fetch-Site
// checked).
package ui
