package compat

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// offsetDirEnv is read once, in the client's package init, to place the
// local (broadcasting) offset store; the default is $HOME/.rocketmq_client_go.
// Since package init runs before TestMain, a test binary started without it
// re-runs itself once with the variable pointing at a temporary directory,
// which is removed afterwards.
const offsetDirEnv = "rocketmq.client.localOffsetStoreDir"

func TestMain(m *testing.M) {
	// The client logs (logrus, to stderr) even at "error" level for conditions it recovers
	// from; keep the test output clean unless ROCKETMQ_GO_LOG_LEVEL asks for more.
	if os.Getenv("ROCKETMQ_GO_LOG_LEVEL") == "" {
		rlog.SetLogLevel("fatal")
	}
	if os.Getenv(offsetDirEnv) == "" {
		os.Exit(reexecWithStateDir())
	}
	os.Exit(m.Run())
}

func reexecWithStateDir() int {
	dir, err := os.MkdirTemp("", "rmq-go-compat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: cannot create temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), offsetDirEnv+"="+dir, "HOME="+dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "compat: re-exec failed:", err)
		return 1
	}
	return 0
}
