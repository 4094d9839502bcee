package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gopkg.in/natefinch/lumberjack.v2"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/audit/policy"
	pluginlog "k8s.io/apiserver/plugin/pkg/audit/log"
)

// AuditConfig is kube-apiserver's audit log options: its policy file
// and JSON log backend, with the log file's rotation.
type AuditConfig struct {
	// PolicyFile is an audit.k8s.io Policy (kube's --audit-policy-file).
	// Without one nothing is audited, as in kube.
	PolicyFile string
	// LogPath is the file events are written to, one JSON line each
	// (kube's --audit-log-path); "-" means standard output. Without it
	// nothing is audited.
	LogPath string
	// MaxAge, MaxBackups and MaxSize rotate the log file as kube's
	// --audit-log-maxage (days), --audit-log-maxbackup and
	// --audit-log-maxsize (megabytes; 0 means never rotate) do; Compress
	// gzips the rotated files (--audit-log-compress).
	MaxAge, MaxBackups, MaxSize int
	Compress                    bool
}

// auditing is the policy and the backend kube's audit filters take; nil
// when nothing is audited.
type auditing struct {
	policy  audit.PolicyRuleEvaluator
	backend audit.Backend
	// out is the log file, closed at shutdown; nil for standard output.
	out io.Closer
}

// newAuditing loads the policy with kube's reader and opens the log as
// kube-apiserver's AuditOptions do: the file is created 0600 with its
// directory, and written through kube's log backend, events in
// audit.k8s.io/v1. Write errors are logged by the backend and do not fail
// requests (kube's default "blocking" mode).
func newAuditing(cfg AuditConfig) (*auditing, error) {
	if cfg.PolicyFile == "" || cfg.LogPath == "" {
		return nil, nil
	}
	p, err := policy.LoadPolicyFromFile(cfg.PolicyFile)
	if err != nil {
		return nil, fmt.Errorf("server: --audit-policy-file: %w", err)
	}
	a := &auditing{policy: policy.NewPolicyRuleEvaluator(p)}
	var w io.Writer = os.Stdout
	if cfg.LogPath != "-" {
		if err := os.MkdirAll(filepath.Dir(cfg.LogPath), 0o700); err != nil {
			return nil, fmt.Errorf("server: --audit-log-path: %w", err)
		}
		f, err := os.OpenFile(cfg.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("server: --audit-log-path: %w", err)
		}
		if cfg.MaxSize > 0 {
			f.Close()
			l := &lumberjack.Logger{Filename: cfg.LogPath, MaxAge: cfg.MaxAge, MaxBackups: cfg.MaxBackups, MaxSize: cfg.MaxSize, Compress: cfg.Compress}
			w, a.out = l, l
		} else {
			w, a.out = f, f
		}
	}
	a.backend = ignoreErrors{pluginlog.NewBackend(w, pluginlog.FormatJson, auditv1.SchemeGroupVersion)}
	return a, nil
}

// close closes the log file; call it once no request runs.
func (a *auditing) close() error {
	if a == nil || a.out == nil {
		return nil
	}
	a.backend.Shutdown()
	if err := a.out.Close(); err != nil {
		return errors.Join(errors.New("server: close the audit log"), err)
	}
	return nil
}

// sink and evaluator are what kube's filters take: untyped nils when
// nothing is audited, so the filters step aside.
func (a *auditing) sink() audit.Sink {
	if a == nil {
		return nil
	}
	return a.backend
}

func (a *auditing) evaluator() audit.PolicyRuleEvaluator {
	if a == nil {
		return nil
	}
	return a.policy
}

// ignoreErrors is kube's blocking mode: a request is served even when
// its event could not be written (the backend logs why).
type ignoreErrors struct{ audit.Backend }

func (b ignoreErrors) ProcessEvents(ev ...*auditinternal.Event) bool {
	b.Backend.ProcessEvents(ev...)
	return true
}
