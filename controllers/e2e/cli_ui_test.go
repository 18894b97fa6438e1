package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// chromium finds Chromium: the browser tests skip without it, with a
// message, except under CI=true, where `make test` installed it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("Chromium is not installed: make browser installs it (as root)")
	}
	t.Skip("Chromium is not installed (make browser installs it as root): the UI's browser tests do not run")
	return ""
}

// startUI starts `kubectl magos ui --no-browser` with extra flags and
// returns the URL it prints (with its one-time code).
func (s *stack) startUI(t *testing.T, extra ...string) string {
	t.Helper()
	out := s.magosInBackground(append([]string{"ui", "--no-browser"}, extra...)...)
	link := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?code=[0-9a-f]+`)
	require.Eventually(t, func() bool { return link.MatchString(out.String()) }, 30*time.Second, 50*time.Millisecond, "the UI prints its URL: %s", out)
	return link.FindString(out.String())
}

// browser is a headless Chromium tab, closed when the test ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-gpu", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// screenshot saves the page as name.png (quality 100 is PNG) in MAGOS_UI_SCREENSHOTS (the
// docs' images: docs/ui.md), else in a temp dir.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("MAGOS_UI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// clickUntil clicks the button until want shows: a live update may replace
// the page's content between finding the button and clicking it.
func clickUntil(t *testing.T, ctx context.Context, button, want string) {
	t.Helper()
	require.Eventually(t, func() bool {
		if chromedp.Do(ctx, chromedp.WaitVisible(button), chromedp.Click(button)) != nil {
			return false
		}
		wait, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return chromedp.Do(wait, chromedp.WaitVisible(want)) == nil
	}, 2*time.Minute, 100*time.Millisecond, "clicking %s shows %s", button, want)
}

// TestUIInABrowser: kubectl magos ui in headless Chromium against the real
// apiserver and controllers. The overview lists the Workspaces and the
// Rollout; a Workspace's page shows its plan; clicking Approve applies it;
// a user whose RBAC does not allow patching Workspaces sees the
// apiserver's refusal; a request without the session, a code used twice,
// a session for another Host, or a write without
// the page's CSRF token or from another origin, is refused; the pages fit
// a phone-sized window.
func TestUIInABrowser(t *testing.T) {
	env.Require(t)
	f := newRolloutFixture(t, 1, []magosv1.Stage{
		{Name: "dev", Selector: envSelector("dev")},
		{Name: "prod", Selector: envSelector("prod"), Promotion: magosv1.PromotionManual},
	}, func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	s := f.stack
	rev := f.commit("v1")
	s.waitWorkspace("dev-a", 3*time.Minute, "awaits approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	link := s.startUI(t)
	origin := strings.SplitN(link, "/?", 2)[0]
	ctx := browser(t)

	// The overview.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(link),
		chromedp.WaitVisible(`a[href="/workspaces/`+s.ns+`/dev-a"]`),
	))
	overview, err := chromedp.Run(ctx, chromedp.Text("main"))
	require.NoError(t, err)
	assert.Contains(t, overview, "release", "the Rollout is listed")
	assert.Contains(t, overview, "AwaitingApproval")
	screenshot(t, ctx, "ui-overview")

	// The plan, and an approval by click.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(origin+"/workspaces/"+s.ns+"/dev-a"),
		chromedp.WaitVisible(`pre.plan`),
	))
	plan, err := chromedp.Run(ctx, chromedp.Text(`pre.plan`))
	require.NoError(t, err)
	assert.Contains(t, plan, "terraform_data", "the readable plan")
	screenshot(t, ctx, "ui-workspace")
	clickUntil(t, ctx, `button[data-action="approve"]`, `#status.ok`)
	status, err := chromedp.Run(ctx, chromedp.Text(`#status`))
	require.NoError(t, err)
	assert.Contains(t, status, "approved by")
	s.waitWorkspace("dev-a", 3*time.Minute, "applies the plan approved in the UI", appliedRevision(rev))
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//p[contains(@class,"phase")]/strong[text()="Idle"]`)),
		"the page followed the apply without a reload")

	// The Rollout page, on a phone-sized window.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulatePortrait),
		chromedp.Navigate(origin+"/rollouts/"+s.ns+"/release"),
		chromedp.WaitVisible(`.stage`),
	))
	fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
	require.NoError(t, err)
	assert.True(t, fits, "the page fits a phone-sized window")
	screenshot(t, ctx, "ui-rollout-phone")
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)))

	// Dark, where the system prefers it.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
			return err
		}),
		chromedp.Navigate(origin+"/workspaces/"+s.ns+"/dev-a"),
		chromedp.WaitVisible(`pre.plan`),
	))
	background, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	require.NoError(t, err)
	assert.Equal(t, "rgb(13, 17, 23)", background, "the dark palette")
	screenshot(t, ctx, "ui-workspace-dark")

	// A user without RBAC to patch Workspaces sees the refusal.
	require.NoError(t, env.Client.Create(context.Background(), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"magos.dev"}, Resources: []string{"workspaces", "rollouts", "projects", "workspacesets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
			{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"list"}},
		},
	}))
	require.NoError(t, env.Client.Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "reader"}},
	}))
	s.waitWorkspace("prod-a", 3*time.Minute, "awaits promotion", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingPromotion
	})
	f.promote("prod", rev)
	s.waitWorkspace("prod-a", 3*time.Minute, "awaits approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	readerLink := s.startUI(t, "--as", "reader")
	readerOrigin := strings.SplitN(readerLink, "/?", 2)[0]
	reader := browser(t)
	require.NoError(t, chromedp.Do(reader,
		chromedp.Navigate(readerLink),
		chromedp.Navigate(readerOrigin+"/workspaces/"+s.ns+"/prod-a"),
	))
	clickUntil(t, reader, `button[data-action="approve"]`, `#status.refused`)
	refusal, err := chromedp.Run(reader, chromedp.Text(`#status`))
	require.NoError(t, err)
	assert.Contains(t, refusal, "forbidden", "the apiserver's refusal is shown")
	screenshot(t, reader, "ui-refused")
	assert.Empty(t, s.workspace("prod-a").Spec.Approvals, "nothing was approved")

	// Forged requests.
	post := func(url string, header map[string]string) int {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"action":"replan","namespace":"`+s.ns+`","name":"dev-a"}`))
		require.NoError(t, err)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	// A UI of its own, whose code this client exchanges: the browser's
	// code is used up.
	link = s.startUI(t)
	origin = strings.SplitN(link, "/?", 2)[0]
	cookie, csrf := uiSession(t, link)
	assert.Equal(t, http.StatusForbidden, post(origin+"/act", nil), "no session")
	assert.Equal(t, http.StatusForbidden, post(origin+"/act", map[string]string{"Cookie": cookie}), "the session but not the page's CSRF token")
	assert.Equal(t, http.StatusForbidden, post(origin+"/act", map[string]string{"Cookie": cookie, "X-Magos-CSRF": csrf, "Origin": "http://evil.example"}),
		"another origin")
	assert.Equal(t, http.StatusForbidden, post(origin+"/act", map[string]string{"Cookie": cookie, "X-Magos-CSRF": csrf, "Sec-Fetch-Site": "cross-site"}),
		"a cross-site request")
	assert.Equal(t, http.StatusOK, post(origin+"/act", map[string]string{"Cookie": cookie, "X-Magos-CSRF": csrf, "Origin": origin}),
		"the UI's own request")
	resp, err := http.Get(origin + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a page without the session")
	resp, err = http.Get(link)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the code works once")
	req, err := http.NewRequest(http.MethodGet, origin+"/", nil)
	require.NoError(t, err)
	req.Header.Set("Cookie", cookie)
	req.Host = strings.Replace(strings.TrimPrefix(origin, "http://"), "127.0.0.1", "localhost", 1)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the session for another Host")
	req, err = http.NewRequest(http.MethodGet, origin+"/workspaces/"+s.ns+"/dev-a/logs?run=0", nil)
	require.NoError(t, err)
	req.Header.Set("Cookie", cookie)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	logs, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.NotEmpty(t, strings.TrimSpace(string(logs)), "a run's output, or why it cannot be read")

	r := s.magos("ui", "--address", "0.0.0.0", "--no-browser")
	assert.Equal(t, 2, r.code, "only loopback without --allow-remote: %s", r)
	assert.Contains(t, r.stderr, "is not a loopback address")
}

// uiSession exchanges the code of a URL the UI printed for its session,
// as a browser does on the first visit, and returns the Cookie header that
// carries it and the CSRF token of the UI's pages.
func uiSession(t *testing.T, link string) (cookie, csrf string) {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(link)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "the code is exchanged")
	require.Len(t, resp.Cookies(), 1)
	c := resp.Cookies()[0]
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
	assert.NotContains(t, link, c.Value, "the session is not the URL's code")
	cookie = c.Name + "=" + c.Value
	origin := strings.SplitN(link, "/?", 2)[0]
	req, err := http.NewRequest(http.MethodGet, origin+"/", nil)
	require.NoError(t, err)
	req.Header.Set("Cookie", cookie)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	m := regexp.MustCompile(`<meta name="magos-csrf" content="([0-9a-f]+)">`).FindSubmatch(page)
	require.NotNil(t, m, "the page carries its CSRF token")
	return cookie, string(m[1])
}
