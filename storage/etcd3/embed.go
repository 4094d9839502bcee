package etcd3

import (
	"context"
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/types"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
)

// DefaultStartTimeout bounds how long StartEmbedded waits for the member to
// become ready when EmbeddedConfig.StartTimeout is zero.
const DefaultStartTimeout = 30 * time.Second

// DefaultTickInterval is the embedded member's raft tick when
// EmbeddedConfig.TickInterval is zero: five times etcd's default. A
// single member sends no heartbeats and elects itself by campaign, so
// its ticks only wake an idle process (see TickInterval).
const DefaultTickInterval = 500 * time.Millisecond

// embeddedBatchInterval is how long the embedded member's backend keeps
// writes before committing them to its database file, when fewer than
// etcd's batch limit (10,000) are waiting: etcd's default is 100 ms.
// The commit loop wakes once per interval, idle or not, like the raft
// tick. Durability is the write-ahead log's, fsynced before each write
// is acknowledged, and reads see uncommitted writes, so a longer
// interval only defers the database file's copy; a restart replays the
// log past the last commit either way.
const embeddedBatchInterval = time.Second

// EmbeddedConfig configures an embedded single-member etcd.
type EmbeddedConfig struct {
	// Dir holds etcd's data (WAL and database). It is created if missing;
	// starting again on the same Dir resumes with the data and revisions
	// it holds. Required.
	Dir string

	// UnsafeNoFsync skips fsync on every write. Data written shortly
	// before a machine crash may be lost; tests and throwaway dev servers
	// set it for speed.
	UnsafeNoFsync bool

	// Logger receives etcd's own log output. Nil discards it.
	Logger *slog.Logger

	// StartTimeout bounds the wait for the member to elect itself leader
	// and serve; zero means DefaultStartTimeout. The ctx passed to
	// StartEmbedded bounds it too.
	StartTimeout time.Duration

	// QuotaBackendBytes caps the database size; zero is etcd's default
	// (2 GiB).
	QuotaBackendBytes int64

	// TickInterval is etcd's raft tick (its heartbeat interval); the
	// election timeout is five ticks. Zero means DefaultTickInterval.
	// Every tick wakes the process, idle or not: at 10ms ticks that
	// alone kept ~1.4% of a core busy on a shared 2-CPU VM, at 100ms
	// ~0.2%, and raft's tick was a fifth of an idle server's CPU
	// profile. A member left to itself becomes leader only after an
	// election timeout and up to as long again (2.5 to 5 s at 500 ms
	// ticks); StartEmbedded has it campaign at once instead (see
	// campaign), so the timeout matters only where campaign cannot be
	// used.
	TickInterval time.Duration

	// LoopbackClient makes Client talk to the member over gRPC on the
	// loopback listener instead of in-process. The in-process client is
	// the default because it is faster (see BenchmarkEmbeddedClient);
	// the loopback one exercises the same path an external cluster does.
	LoopbackClient bool

	// NoClientListener opens no client port at all: only the in-process
	// Client reaches the member, so no other process on the machine can
	// read or write etcd (it has no authentication of its own). Endpoint
	// is then empty. Ignored with LoopbackClient.
	NoClientListener bool
}

// Embedded is a running single-member etcd inside this process. It
// listens for clients on an ephemeral loopback port (Endpoint) and opens no
// peer listener, so any number of members can run in one process or on one
// machine.
type Embedded struct {
	// Client talks to the member; Close closes it. Share it; do not close
	// it yourself.
	Client *clientv3.Client

	etcd     *embed.Etcd
	endpoint string
	// watches are the in-process Client's watches; nil with
	// LoopbackClient.
	watches *mvccWatcher
}

// Endpoint is the member's client URL (http://127.0.0.1:<port>), for
// clients in other processes or for a loopback client of your own; empty
// with NoClientListener.
func (e *Embedded) Endpoint() string { return e.endpoint }

// Close closes Client, stops the member and returns once it has stopped
// and released Dir.
func (e *Embedded) Close() error {
	var err error
	if e.Client != nil {
		err = e.Client.Close()
	}
	if e.watches != nil {
		_ = e.watches.Close()
	}
	e.etcd.Close()
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("etcd3: close embedded client: %w", err)
	}
	return nil
}

// memberName names the single member. It is fixed: etcd records it in the
// data directory and a restart on the same Dir must present it again.
const memberName = "miniapi"

// unusedPeerURL is the peer URL the member advertises. A single member
// never dials its peers, so nothing listens on it; it is fixed (rather
// than an ephemeral port) because etcd records it at bootstrap and checks
// it against the initial cluster on every start.
var unusedPeerURL = url.URL{Scheme: "http", Host: "127.0.0.1:2380"}

// embeddedElectionTicks is the election timeout in ticks: five, the least
// etcd accepts. A member starting alone fast-forwards to one tick short of
// the timeout, but raft draws its timeout at random between one and two
// timeouts, so it would become leader after 1 to embeddedElectionTicks
// ticks; campaign spares that wait, and the short timeout bounds it
// should campaign not work. A single member has no peer to lose contact
// with, so the shorter timeout costs nothing.
const embeddedElectionTicks = 5

// embeddedSnapshotCount is how many commits the embedded member makes
// between raft snapshots.
const embeddedSnapshotCount = 1000

// embeddedCatchUpEntries is how many applied raft entries the embedded
// member keeps in memory after a snapshot.
const embeddedCatchUpEntries = 100

// Write-ahead log retention. etcd cuts a new WAL segment only when the
// current one passes wal.SegmentSizeBytes (64 MB), and purges only whole
// segments older than the last snapshot, so a member's WAL grows to 64
// MB before any of it can go; and every start decodes all of it twice
// (once to find the snapshot, once to replay), whatever the snapshot
// count. With small segments and few kept, what a start reads is bounded
// by the entries since the last snapshot plus a segment or two: over 10,000
// stored objects, a tenth of what it was, and no longer growing with the
// number of writes. Segments still locked by the WAL (those after the last
// snapshot) are never purged, whatever the count.
const (
	embeddedWALSegmentBytes = 1 << 20
	embeddedMaxWALFiles     = 2
)

// setWALSegmentSize sets etcd's WAL segment size, a package variable of
// go.etcd.io/etcd/server/v3/storage/wal, once per process, before the first
// embedded member starts: every member this package starts begins after
// it, so none reads the variable while it is written. It applies to every
// etcd the process embeds.
var setWALSegmentSize = sync.OnceFunc(func() { wal.SegmentSizeBytes = embeddedWALSegmentBytes })

// StartEmbedded starts a single-member etcd on cfg.Dir and returns once it
// serves (or ctx ends, or cfg.StartTimeout passes). The caller must Close
// it.
func StartEmbedded(ctx context.Context, cfg EmbeddedConfig) (*Embedded, error) {
	if cfg.Dir == "" {
		return nil, errors.New("etcd3: embedded etcd needs a data directory")
	}
	ec := embed.NewConfig()
	ec.Name = memberName
	ec.Dir = cfg.Dir
	ec.UnsafeNoFsync = cfg.UnsafeNoFsync
	lg := zap.NewNop()
	if cfg.Logger != nil {
		lg = zap.New(newSlogCore(cfg.Logger.Handler()))
	}
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)

	// Port 0: the kernel picks a free port, so instances never collide.
	// The advertised client URL is only recorded in the member list.
	clientURL := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	ec.ListenClientUrls = []url.URL{clientURL}
	ec.AdvertiseClientUrls = []url.URL{clientURL}
	inProcessOnly := cfg.NoClientListener && !cfg.LoopbackClient
	if inProcessOnly {
		ec.ListenClientUrls = nil
	}
	ec.ListenPeerUrls = nil
	ec.AdvertisePeerUrls = []url.URL{unusedPeerURL}
	ec.InitialCluster = memberName + "=" + unusedPeerURL.String()
	ec.InitialClusterToken = "miniapi-embedded"
	// The gateway dials the listen address, which is unknown with port 0;
	// miniapi does not use etcd's HTTP/JSON gateway.
	ec.EnableGRPCGateway = false
	fresh := newMemberDir(cfg.Dir)
	tick := cfg.TickInterval
	if tick <= 0 {
		tick = DefaultTickInterval
	}
	ec.TickMs = uint(max(tick.Milliseconds(), 1))
	ec.ElectionMs = embeddedElectionTicks * ec.TickMs
	ec.BackendBatchInterval = embeddedBatchInterval
	if cfg.QuotaBackendBytes > 0 {
		ec.QuotaBackendBytes = cfg.QuotaBackendBytes
	}
	// A restart replays the write-ahead log since the last raft snapshot;
	// etcd's default of one snapshot per 10,000 commits made a start over
	// a data dir with 10,000 writes spend a fifth of its CPU replaying
	// them. A single member has no follower to catch up, so snapshots
	// every 1,000 commits cost little and bound the replay.
	ec.SnapshotCount = embeddedSnapshotCount
	// After each snapshot etcd keeps this many raft entries in memory
	// for a slow follower to catch up from (5,000 by default: every
	// value written lately, a second time); a single member has none.
	ec.SnapshotCatchUpEntries = embeddedCatchUpEntries
	ec.MaxWalFiles = embeddedMaxWALFiles
	setWALSegmentSize()

	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("etcd3: start embedded etcd in %s: %w", cfg.Dir, err)
	}
	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var campaigning sync.WaitGroup
	defer campaigning.Wait()
	cctx, stopCampaign := context.WithCancel(ctx)
	defer stopCampaign()
	campaigning.Go(func() { campaign(cctx, e.Server, fresh) })
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcd3: embedded etcd failed to start: %w", err)
	case <-timer.C:
		e.Close()
		return nil, fmt.Errorf("etcd3: embedded etcd not ready after %v", timeout)
	case <-ctx.Done():
		e.Close()
		return nil, fmt.Errorf("etcd3: start embedded etcd: %w", ctx.Err())
	}
	emb := &Embedded{etcd: e}
	if !inProcessOnly {
		if len(e.Clients) == 0 {
			e.Close()
			return nil, errors.New("etcd3: embedded etcd has no client listener")
		}
		emb.endpoint = "http://" + e.Clients[0].Addr().String()
	}
	if cfg.LoopbackClient {
		emb.Client, err = clientv3.New(clientv3.Config{
			Endpoints:   []string{emb.endpoint},
			DialTimeout: timeout,
			Logger:      lg,
		})
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("etcd3: connect to embedded etcd: %w", err)
		}
	} else {
		emb.Client = v3client.New(e.Server)
		emb.Client.KV = GuardedKV(emb.Client.KV, ended)
		emb.watches = newMVCCWatcher(e.Server)
		emb.Client.Watcher = emb.watches
	}
	return emb, nil
}

// campaign makes a single member elect itself now rather than after its
// election timeout, until it has a leader or ctx ends. etcd has no call
// for it; raft's own is a MsgHup stepped into the node, and the only
// path in from outside etcdserver is Process, which raft accepts local
// messages through when they come from one of its local threads
// (LocalAppendThread). raft ignores the message once the member is
// leader, and refuses it until the member has applied its bootstrap
// configuration, so it is sent again until there is a leader: after 1ms,
// then twice as long each time, because each one starts the election
// anew, and one sent sooner than the member can count its own vote
// (a round through etcd's apply loop) would delay it. Should a later
// raft drop the message, the member still elects itself on its timeout,
// only later.
//
// A restarted member replays its log first, and until raft has gone
// through the replayed entries a MsgHup makes it scan the committed
// entries it has not applied for configuration changes, some of which
// etcd may already have compacted from the in-memory log: raft panics
// (seen on a data directory of a few hundred writes). So a restarted
// member (not fresh) sends the message only once raft reports everything
// committed as applied (replayed); nothing commits without a leader, so
// that stays true until the member leads. A new member has nothing to
// replay, and campaigns without asking (raft's status can only be read
// for the member started last in the process).
func campaign(ctx context.Context, s *etcdserver.EtcdServer, fresh bool) {
	for wait := time.Millisecond; s.Leader() == types.ID(raft.None); wait = min(2*wait, time.Second) {
		state := replayDone
		if !fresh {
			state = replayed(s.MemberID())
		}
		switch state {
		case replayDone:
			to, from := uint64(s.MemberID()), raft.LocalAppendThread
			_ = s.Process(ctx, &raftpb.Message{Type: raftpb.MsgHup.Enum(), To: &to, From: &from})
		case replayUnknown:
			return // left to raft's election timeout
		case replayRunning:
			wait = time.Millisecond // poll until the replay ends
		}
		select {
		case <-time.After(wait):
		case <-s.StoppingNotify():
			return
		case <-ctx.Done():
			return
		}
	}
}

// newMemberDir reports whether dir holds no etcd member yet, so that
// StartEmbedded bootstraps a new one there.
func newMemberDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "member"))
	return errors.Is(err, fs.ErrNotExist)
}

// replayState says whether a member's raft has applied what it commits.
type replayState int

const (
	replayDone replayState = iota
	replayRunning
	// replayUnknown: raft's status can not be read for this member.
	replayUnknown
)

// replayed reads raft's status of member id. etcd publishes the status
// of the raft node it started last in the process as the expvar
// "raft.status" (the only way to it from outside etcdserver); when
// another member has started since, id's status is unknown.
func replayed(id types.ID) replayState {
	v := expvar.Get("raft.status")
	if v == nil {
		return replayUnknown
	}
	var st struct {
		ID      string `json:"id"`
		Commit  uint64 `json:"commit"`
		Applied uint64 `json:"applied"`
	}
	if err := json.Unmarshal([]byte(v.String()), &st); err != nil || st.ID != id.String() {
		return replayUnknown
	}
	if st.Applied < st.Commit {
		return replayRunning
	}
	return replayDone
}
