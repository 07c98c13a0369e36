package deploy_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lease-exporter/lease-exporter/internal/testenv/tools"
)

// instruction is one Dockerfile instruction with its stage.
type instruction struct {
	cmd   string // upper case: FROM, RUN, ...
	args  string // the rest, continuation lines joined
	stage int    // index of the FROM it belongs to; -1 before the first FROM
	line  int
}

// parseDockerfile reads instructions, joining backslash continuations and dropping comments
// (including comment lines inside a continued instruction, as BuildKit does).
func parseDockerfile(t *testing.T, data []byte) []instruction {
	t.Helper()
	var out []instruction
	stage := -1
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		cont := strings.HasSuffix(trimmed, "\\")
		cur.WriteString(strings.TrimSuffix(trimmed, "\\"))
		cur.WriteString(" ")
		if cont {
			continue
		}
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		cmd, args, _ := strings.Cut(text, " ")
		cmd = strings.ToUpper(cmd)
		if cmd == "FROM" {
			stage++
		}
		out = append(out, instruction{cmd: cmd, args: strings.Join(strings.Fields(args), " "), stage: stage, line: start})
	}
	if cur.Len() != 0 {
		t.Fatal("Dockerfile ends inside a continued instruction")
	}
	return out
}

// TestDockerfile checks that the image is built by hack/build.sh (the one release build) and
// is the hardened image the manifests assume: distroless static, numeric non-root user,
// exec-form entrypoint, the exporter's port, OCI labels.
func TestDockerfile(t *testing.T) {
	root := tools.RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	ins := parseDockerfile(t, data)

	// Global ARG defaults, for FROM lines that use them.
	globals := map[string]string{}
	for _, in := range ins {
		if in.stage == -1 && in.cmd == "ARG" {
			k, v, _ := strings.Cut(in.args, "=")
			globals[k] = strings.Trim(v, `"`)
		}
	}
	expand := func(s string) string {
		return regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`).ReplaceAllStringFunc(s, func(m string) string {
			name := strings.Trim(m, "${}")
			if v, ok := globals[name]; ok {
				return v
			}
			return m
		})
	}

	type stage struct {
		image, name string
		ins         []instruction
	}
	var stages []stage
	for _, in := range ins {
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			var s stage
			for i := 0; i < len(f); i++ {
				switch {
				case strings.HasPrefix(f[i], "--"):
				case strings.EqualFold(f[i], "AS") && i+1 < len(f):
					s.name = f[i+1]
					i++
				default:
					s.image = expand(f[i])
				}
			}
			stages = append(stages, s)
			continue
		}
		if in.stage >= 0 {
			stages[in.stage].ins = append(stages[in.stage].ins, in)
		}
	}
	if len(stages) < 2 {
		t.Fatalf("want a multi-stage Dockerfile, found %d stage(s)", len(stages))
	}

	// The builder: golang at the go.mod's minor version, running hack/build.sh.
	builder := stages[0]
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goMinor := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if goMinor == nil {
		t.Fatal("no go directive in go.mod")
	}
	if want := "golang:" + string(goMinor[1]); builder.image != want && !strings.HasPrefix(builder.image, want+".") && !strings.HasPrefix(builder.image, want+"-") {
		t.Errorf("builder stage image = %q, want %s (go.mod says go %s)", builder.image, want, goMinor[1])
	}
	builderArgs := map[string]bool{}
	var buildRun *instruction
	for i, in := range builder.ins {
		switch in.cmd {
		case "ARG":
			k, _, _ := strings.Cut(in.args, "=")
			builderArgs[k] = true
		case "RUN":
			if strings.Contains(in.args, "hack/build.sh") {
				buildRun = &builder.ins[i]
			}
			if regexp.MustCompile(`\bgo\s+build\b`).MatchString(in.args) {
				t.Errorf("Dockerfile:%d runs `go build` itself; the build flags live only in hack/build.sh", in.line)
			}
		}
	}
	if buildRun == nil {
		t.Fatal("the builder stage does not RUN hack/build.sh")
	}
	for _, arg := range []string{"VERSION", "REVISION"} {
		if !builderArgs[arg] {
			t.Errorf("builder stage lacks ARG %s", arg)
		}
		if !regexp.MustCompile(`\b` + arg + `="?\$\{?` + arg + `\b`).MatchString(buildRun.args) {
			t.Errorf("Dockerfile:%d does not pass the %s build arg to hack/build.sh: %s", buildRun.line, arg, buildRun.args)
		}
	}
	m := regexp.MustCompile(`hack/build\.sh\s+(\S+)`).FindStringSubmatch(buildRun.args)
	if m == nil {
		t.Fatalf("Dockerfile:%d: hack/build.sh is not given an output path: %s", buildRun.line, buildRun.args)
	}
	builtBinary := m[1]

	// The final stage.
	final := stages[len(stages)-1]
	if final.image != "gcr.io/distroless/static-debian12:nonroot" {
		t.Errorf("final image = %q, want gcr.io/distroless/static-debian12:nonroot", final.image)
	}
	var user, entrypoint, copied string
	var expose []string
	labels := map[string]string{}
	for _, in := range final.ins {
		switch in.cmd {
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			entrypoint = in.args
		case "EXPOSE":
			expose = append(expose, strings.Fields(in.args)...)
		case "COPY":
			f := strings.Fields(in.args)
			if len(f) >= 3 && f[0] == "--from="+builder.name && f[1] == builtBinary {
				copied = f[len(f)-1]
			}
		case "LABEL":
			for _, kv := range regexp.MustCompile(`([\w.\-]+)=("[^"]*"|\S+)`).FindAllStringSubmatch(in.args, -1) {
				labels[kv[1]] = strings.Trim(kv[2], `"`)
			}
		}
	}
	if user != "65532:65532" {
		t.Errorf("USER = %q, want numeric 65532:65532 (runAsNonRoot can only verify a numeric user)", user)
	}
	var ep []string
	if err := json.Unmarshal([]byte(entrypoint), &ep); err != nil || len(ep) == 0 {
		t.Errorf("ENTRYPOINT %q is not exec form (a JSON array): %v", entrypoint, err)
	}
	if copied == "" {
		t.Errorf("the final stage does not COPY --from=%s %s (the binary hack/build.sh built)", builder.name, builtBinary)
	} else if len(ep) > 0 && ep[0] != copied {
		t.Errorf("ENTRYPOINT runs %q, but the binary is copied to %q", ep[0], copied)
	}
	if !strings.Contains(" "+strings.Join(expose, " ")+" ", " 10047 ") && !strings.Contains(" "+strings.Join(expose, " ")+" ", " 10047/tcp ") {
		t.Errorf("EXPOSE %v lacks 10047", expose)
	}
	for _, l := range []string{"title", "description", "source", "url", "version", "revision", "created"} {
		if labels["org.opencontainers.image."+l] == "" {
			t.Errorf("missing LABEL org.opencontainers.image.%s", l)
		}
	}
	if labels["org.opencontainers.image.version"] != "${VERSION}" || labels["org.opencontainers.image.revision"] != "${REVISION}" {
		t.Errorf("OCI version/revision labels must come from the VERSION/REVISION build args: %v", labels)
	}
	if got := labels["org.opencontainers.image.licenses"]; got != licenseSPDX {
		t.Errorf("LABEL org.opencontainers.image.licenses = %q, want %q (the LICENSE file's)", got, licenseSPDX)
	}
}

// dockerignore is the subset of .dockerignore syntax this repository uses: one pattern per
// line, `!` negation, path.Match globs, a leading **/ for "at any depth"; a pattern that
// matches a directory excludes everything under it. The last matching pattern wins.
type dockerignore []string

func (d dockerignore) excluded(p string) bool {
	excl := false
	for _, pat := range d {
		neg := strings.HasPrefix(pat, "!")
		pat = strings.TrimPrefix(pat, "!")
		if matchIgnore(strings.TrimSuffix(strings.TrimPrefix(pat, "/"), "/"), p) {
			excl = !neg
		}
	}
	return excl
}

func matchIgnore(pat, p string) bool {
	parts := strings.Split(p, "/")
	for i := 1; i <= len(parts); i++ { // p itself or any parent directory
		prefix := strings.Join(parts[:i], "/")
		if ok, _ := path.Match(pat, prefix); ok {
			return true
		}
		if rest, ok := strings.CutPrefix(pat, "**/"); ok {
			for j := 0; j < i; j++ {
				if ok, _ := path.Match(rest, strings.Join(parts[j:i], "/")); ok {
					return true
				}
			}
		}
	}
	return false
}

// TestDockerignoreKeepsTheBuildInputs checks that the build context still holds every file the
// binary is compiled from (sources and embeds of each package of this module that
// ./cmd/lease-exporter imports), go.mod, go.sum and hack/build.sh.
func TestDockerignoreKeepsTheBuildInputs(t *testing.T) {
	root := tools.RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var d dockerignore
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			d = append(d, l)
		}
	}
	out := run(t, root, nil, "go", "list", "-deps", "-f",
		`{{if .Module}}{{if .Module.Main}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .EmbedFiles}} {{.}}{{end}}{{end}}{{end}}`,
		"./cmd/lease-exporter")
	files := []string{"go.mod", "go.sum", "hack/build.sh"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		rel, err := filepath.Rel(root, f[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range f[1:] {
			files = append(files, filepath.ToSlash(filepath.Join(rel, name)))
		}
	}
	if len(files) < 10 {
		t.Fatalf("go list found only %v; expected the exporter's sources", files)
	}
	for _, f := range files {
		if d.excluded(f) {
			t.Errorf(".dockerignore excludes %s, which the image build needs", f)
		}
	}
	// And it does keep the context small: none of these belong in it.
	for _, f := range []string{".git/HEAD", "deploy/kustomize/base/kustomization.yaml", "dashboards/lease-detail.json", "test/deploy/build_test.go", "collector/testdata/golden.prom"} {
		if !d.excluded(f) {
			t.Errorf(".dockerignore does not exclude %s", f)
		}
	}
}

// buildEnv is the environment for hack/build.sh with the version inputs cleared.
func buildEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "VERSION", "REVISION", "BRANCH", "BUILD_USER", "BUILD_DATE", "SOURCE_DATE_EPOCH", "CGO_ENABLED", "GOOS", "GOARCH":
			continue
		}
		env = append(env, kv)
	}
	// CGO_ENABLED=1 in the caller's environment must not leak into the release build.
	return append(append(env, "CGO_ENABLED=1"), extra...)
}

func buildScript(t *testing.T, env []string) string {
	t.Helper()
	root := tools.RepoRoot(t)
	out := filepath.Join(t.TempDir(), "lease-exporter")
	cmd := exec.Command(filepath.Join(root, "hack", "build.sh"), out)
	cmd.Dir = t.TempDir() // the script must not depend on the caller's directory
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/build.sh: %v\n%s", err, b)
	}
	return out
}

func versionOutput(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	return string(out)
}

// TestBuildScriptMakesStaticStampedBinary builds with hack/build.sh exactly as the Dockerfile
// does and checks the result: statically linked (no interpreter, no dynamic section), stripped,
// trimmed paths, and --version reporting the injected version information.
func TestBuildScriptMakesStaticStampedBinary(t *testing.T) {
	const (
		version  = "1.2.3-deploytest"
		revision = "0123456789abcdef0123456789abcdef01234567"
	)
	bin := buildScript(t, buildEnv(
		"VERSION="+version, "REVISION="+revision, "BRANCH=deploy-test",
		"BUILD_USER=tester@ci", "BUILD_DATE=20260102-03:04:05",
	))

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("not an ELF binary: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("binary has a PT_INTERP program header: it is dynamically linked (CGO_ENABLED=0 missing?)")
		}
		if p.Type == elf.PT_DYNAMIC {
			t.Error("binary has a PT_DYNAMIC program header: it is dynamically linked")
		}
	}
	for _, s := range []string{".interp", ".dynamic"} {
		if f.Section(s) != nil {
			t.Errorf("binary has a %s section: it is dynamically linked", s)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("binary needs shared libraries %v", libs)
	}
	if _, err := f.Symbols(); !errors.Is(err, elf.ErrNoSymbols) {
		t.Errorf("binary has a symbol table (want -s): %v", err)
	}
	if f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil {
		t.Error("binary has DWARF (want -w)")
	}
	raw, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if root := tools.RepoRoot(t); bytes.Contains(raw, []byte(root+"/")) {
		t.Errorf("binary contains the build directory %s (want -trimpath)", root)
	}
	out := versionOutput(t, bin)
	for _, want := range []string{
		"version " + version,
		"revision: " + revision,
		"branch: deploy-test",
		"build user:       tester@ci",
		"build date:       20260102-03:04:05",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--version output lacks %q:\n%s", want, out)
		}
	}
}

// TestBuildScriptWithoutGit is the docker build case: no .git in the context and no build
// args. The script must still build, reporting "unknown" rather than failing.
func TestBuildScriptWithoutGit(t *testing.T) {
	bin := buildScript(t, buildEnv("GIT_DIR="+filepath.Join(t.TempDir(), "no-such-git-dir")))
	out := versionOutput(t, bin)
	for _, want := range []string{"version unknown", "revision: unknown", "branch: unknown"} {
		if !strings.Contains(out, want) {
			t.Errorf("--version output without git lacks %q:\n%s", want, out)
		}
	}
}

// TestBuildScriptReadsGit: without build args, a build from a git checkout reports the
// checkout's commit.
func TestBuildScriptReadsGit(t *testing.T) {
	root := tools.RepoRoot(t)
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Logf("not a git checkout (%v): nothing to compare with; TestBuildScriptWithoutGit covers this case", err)
		return
	}
	bin := buildScript(t, buildEnv())
	out := versionOutput(t, bin)
	if want := "revision: " + strings.TrimSpace(string(head)); !strings.Contains(out, want) {
		t.Errorf("--version output lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "version unknown") {
		t.Errorf("a build from git reports version unknown:\n%s", out)
	}
}
