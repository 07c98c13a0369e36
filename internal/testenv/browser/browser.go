// Package browser starts Debian's headless Chromium for the tests that look at a page as a
// person would: the status page (test/integration) and the dashboards drawn in Perses
// (test/e2e, release tier).
package browser

import (
	"context"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Path is Debian's chromium, which hack/deps.sh installs.
const Path = "/usr/bin/chromium"

// Start runs headless Chromium with a fresh profile, a window of width×height and nothing
// that reaches out on its own (no background networking, component updates, sync or QUIC):
// it loads only the pages a test opens, all on loopback. The returned chromedp context ends,
// and the browser with it, when the test does.
func Start(t testing.TB, width, height int) context.Context {
	t.Helper()
	if _, err := exec.LookPath(Path); err != nil {
		t.Fatalf("%s not found (hack/deps.sh installs Debian's chromium): %v", Path, err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(Path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height))
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}
