package election

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PythonPath is Debian's interpreter, which sees python3-kubernetes; the python3 first on
// PATH may be another installation without it.
const PythonPath = "/usr/bin/python3"

//go:embed python/*.py
var pythonScripts embed.FS

// PythonLock is the lock a Python elector drives.
type PythonLock string

const (
	// PythonConfigMap is the client's own ConfigMapLock (the leader annotation).
	PythonConfigMap PythonLock = "configmap"
	// PythonLease is python/leaselock.py, a Lease lock in the style of ConfigMapLock.
	PythonLease PythonLock = "lease"
)

// PythonOptions configure a Python elector.
type PythonOptions struct {
	Kubeconfig                string
	Namespace, Name, Identity string
	Lock                      PythonLock
	// Faketime shifts the elector's clock with libfaketime ("-120s", "+300s"); "" leaves it.
	Faketime string
	// LeaseDuration, RenewDeadline and RetryPeriod are whole seconds; 0 means 15, 10 and 2.
	LeaseDuration, RenewDeadline, RetryPeriod int
	// Dir receives the scripts and the log (<identity>.log); required.
	Dir string
	// Env is added to the environment, e.g. TZ=Europe/Berlin.
	Env []string
}

// PythonElector is the Python client's LeaderElection running as a separate process.
type PythonElector struct {
	Identity string
	cmd      *exec.Cmd
	logPath  string
	done     chan struct{}
}

// Log markers printed by python/elector.py.
const (
	pyStarted = "elector: started leading"
	pyStopped = "elector: stopped leading"
)

// CheckPython reports what is missing to run Python electors (with faketime, if asked).
func CheckPython(faketime bool) error {
	hint := "; run hack/deps.sh, which installs python3-kubernetes and faketime"
	if out, err := exec.Command(PythonPath, "-c", "import kubernetes.leaderelection.leaderelection").CombinedOutput(); err != nil {
		return fmt.Errorf("%s cannot import kubernetes.leaderelection: %w: %s%s", PythonPath, err, strings.TrimSpace(string(out)), hint)
	}
	if _, err := libfaketime(); faketime && err != nil {
		return fmt.Errorf("%w%s", err, hint)
	}
	return nil
}

// FaketimeEnv returns the environment variables that shift a program's clock by offset
// ("-120s", "+300s") with libfaketime preloaded, as the faketime wrapper does, but without
// the wrapper. Both create a POSIX semaphore and shared memory named after the pid, which a
// killed elector leaves in /dev/shm; given the same pid later, the wrapper exits with
// "sem_open: File exists" (seen in a cold CI run after earlier runs on the same machine),
// while the preloaded library carries on with the shifted clock (checked with leftovers
// planted for the next pids).
// Go programs read the clock through the vDSO and are not shifted.
func FaketimeEnv(offset string) ([]string, error) {
	lib, err := libfaketime()
	if err != nil {
		return nil, err
	}
	return []string{"LD_PRELOAD=" + lib, "FAKETIME=" + offset}, nil
}

// libfaketime finds the library of Debian's faketime package (and of upstream's install).
func libfaketime() (string, error) {
	for _, pattern := range []string{"/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1",
		"/usr/local/lib/faketime/libfaketime.so.1"} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return m[0], nil
		}
	}
	return "", errors.New("libfaketime.so.1 not found under /usr/lib/*/faketime, /usr/lib/faketime or /usr/local/lib/faketime")
}

// StartPython starts a Python elector. It runs until Kill or Stop, or until it fails to
// renew (the library then returns from run() and the program exits).
func StartPython(o PythonOptions) (*PythonElector, error) {
	if o.Dir == "" || o.Kubeconfig == "" || o.Identity == "" {
		return nil, errors.New("python elector: Dir, Kubeconfig and Identity are required")
	}
	lock := o.Lock
	if lock == "" {
		lock = PythonConfigMap
	}
	scripts := filepath.Join(o.Dir, "python-elector")
	if err := os.MkdirAll(scripts, 0o755); err != nil {
		return nil, err
	}
	entries, _ := pythonScripts.ReadDir("python")
	for _, e := range entries {
		b, _ := pythonScripts.ReadFile("python/" + e.Name())
		if err := os.WriteFile(filepath.Join(scripts, e.Name()), b, 0o644); err != nil {
			return nil, err
		}
	}
	seconds := func(v, def int) string { return strconv.Itoa(orDefault(v, def)) }
	args := []string{PythonPath, "-u", filepath.Join(scripts, "elector.py"),
		"--kubeconfig", o.Kubeconfig, "--namespace", o.Namespace, "--name", o.Name, "--identity", o.Identity,
		"--lock", string(lock), "--lease-duration", seconds(o.LeaseDuration, 15),
		"--renew-deadline", seconds(o.RenewDeadline, 10), "--retry-period", seconds(o.RetryPeriod, 2)}
	env := append(os.Environ(), o.Env...)
	if o.Faketime != "" {
		shift, err := FaketimeEnv(o.Faketime)
		if err != nil {
			return nil, err
		}
		env = append(env, shift...)
	}
	p := &PythonElector{Identity: o.Identity, logPath: filepath.Join(o.Dir, o.Identity+".log"), done: make(chan struct{})}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.Env = env
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("python elector %s: %w", o.Identity, err)
	}
	go func() {
		_ = p.cmd.Wait() // the exit status of a killed elector says nothing; its log does
		close(p.done)
	}()
	return p, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Kill ends the elector with SIGKILL, as a crash or an OOM kill would: it does not renew
// again and (like every exit of this library) does not release.
func (p *PythonElector) Kill() { p.signal(syscall.SIGKILL) }

// Stop ends the elector with SIGTERM, the way a pod is stopped, and kills it after 10 s.
// The library has no release: the lock stays with it until it expires.
func (p *PythonElector) Stop() {
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.Kill()
	}
}

func (p *PythonElector) signal(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	if sig == syscall.SIGKILL {
		<-p.done
	}
}

// Done is closed when the process has exited.
func (p *PythonElector) Done() <-chan struct{} { return p.done }

// Leading reports whether the running elector has said it started leading and not since
// said it stopped.
func (p *PythonElector) Leading() bool {
	select {
	case <-p.done:
		return false
	default:
	}
	log := p.Log()
	start := strings.LastIndex(log, pyStarted)
	return start >= 0 && strings.LastIndex(log, pyStopped) < start
}

// Log is everything the elector printed so far: the library's logging and elector.py's lines.
func (p *PythonElector) Log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// LogPath is the file Log reads.
func (p *PythonElector) LogPath() string { return p.logPath }
