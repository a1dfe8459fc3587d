package compat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

const (
	// upper bound for waiting until every expected message was consumed
	consumeTimeout = 45 * time.Second
	// upper bound for a single send call (sync / batch / oneway)
	sendTimeout = 10 * time.Second
	// upper bound for Shutdown of a client; the Go client can block on it
	shutdownTimeout = 15 * time.Second
	// upper bound for a new topic's route to show up on the nameserver
	routeTimeout = 15 * time.Second
)

var (
	runIDOnce sync.Once
	runIDVal  string
	instSeq   int64
	nameRe    = regexp.MustCompile(`[^A-Za-z0-9_-]`)
)

// runID makes topic/group names unique per run: env RUN_ID, else time+pid.
func runID() string {
	runIDOnce.Do(func() {
		if v := os.Getenv("RUN_ID"); v != "" {
			runIDVal = nameRe.ReplaceAllString(v, "_")
		} else {
			runIDVal = strconv.FormatInt(time.Now().UnixNano()/int64(time.Millisecond), 36) + "_" + strconv.Itoa(os.Getpid())
		}
	})
	return runIDVal
}

// names returns (topic, group) unique to this run and scenario.
func names(scenario string) (string, string) {
	return "GoCompat_" + scenario + "_" + runID(), "GoCompatG_" + scenario + "_" + runID()
}

func nextInstance(prefix string) string {
	return fmt.Sprintf("%s_%s_%d", prefix, runID(), atomic.AddInt64(&instSeq, 1))
}

// namesrv returns NAMESRV_ADDR or skips the test.
func namesrv(t *testing.T) primitive.NamesrvAddr {
	t.Helper()
	v := strings.TrimSpace(os.Getenv("NAMESRV_ADDR"))
	if v == "" {
		t.Skip("NAMESRV_ADDR is not set (e.g. NAMESRV_ADDR=127.0.0.1:9876); skipping broker compatibility scenario")
	}
	addrs := strings.Split(v, ";")
	ns, err := primitive.NewNamesrvAddr(addrs...)
	if err != nil {
		t.Fatalf("bad NAMESRV_ADDR %q: %v", v, err)
	}
	return ns
}

// shutdownBounded runs fn (a client Shutdown) but gives up after shutdownTimeout.
func shutdownBounded(t *testing.T, what string, fn func() error) {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err != nil {
			t.Logf("%s shutdown: %v", what, err)
		}
	case <-time.After(shutdownTimeout):
		t.Logf("%s shutdown did not return within %s (left behind)", what, shutdownTimeout)
	}
}

func newProducer(t *testing.T, group string, opts ...producer.Option) rocketmq.Producer {
	t.Helper()
	all := append([]producer.Option{
		producer.WithNameServer(namesrv(t)),
		producer.WithGroupName(group),
		producer.WithInstanceName(nextInstance("p")),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5 * time.Second),
	}, opts...)
	p, err := rocketmq.NewProducer(all...)
	if err != nil {
		t.Fatalf("NewProducer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer Start: %v", err)
	}
	t.Cleanup(func() { shutdownBounded(t, "producer "+group, p.Shutdown) })
	return p
}

// collector gathers consumed messages keyed by body (bodies are unique per scenario).
type collector struct {
	mu     sync.Mutex
	byBody map[string]*primitive.MessageExt
	dups   int
	total  int
	notify chan struct{}
}

func newCollector() *collector {
	return &collector{byBody: map[string]*primitive.MessageExt{}, notify: make(chan struct{}, 1)}
}

func (c *collector) handle(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	c.mu.Lock()
	for _, m := range msgs {
		c.total++
		k := string(m.Body)
		if _, ok := c.byBody[k]; ok {
			c.dups++
			continue
		}
		c.byBody[k] = m
	}
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
	return consumer.ConsumeSuccess, nil
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byBody)
}

func (c *collector) snapshot() map[string]*primitive.MessageExt {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]*primitive.MessageExt, len(c.byBody))
	for k, v := range c.byBody {
		out[k] = v
	}
	return out
}

// waitFor waits until n distinct bodies were received or the timeout passes.
func (c *collector) waitFor(t *testing.T, n int, timeout time.Duration) bool {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if c.count() >= n {
			return true
		}
		select {
		case <-c.notify:
		case <-deadline.C:
			return c.count() >= n
		}
	}
}

// settle waits a little more and returns the final view (to catch unexpected extra messages).
func (c *collector) settle(d time.Duration) map[string]*primitive.MessageExt {
	time.Sleep(d)
	return c.snapshot()
}

type pushOpts struct {
	selector consumer.MessageSelector
	model    consumer.MessageModel
	instance string
	extra    []consumer.Option
	// handler replaces col.handle (col may then be nil)
	handler func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error)
}

func startPushConsumer(t *testing.T, topic, group string, col *collector, po pushOpts) rocketmq.PushConsumer {
	t.Helper()
	inst := po.instance
	if inst == "" {
		inst = nextInstance("c")
	}
	opts := append([]consumer.Option{
		consumer.WithNameServer(namesrv(t)),
		consumer.WithGroupName(group),
		consumer.WithInstance(inst),
		consumer.WithConsumerModel(po.model),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumeGoroutineNums(4),
	}, po.extra...)
	handler := po.handler
	if handler == nil {
		handler = col.handle
	}
	// Start fails when the topic has no route yet (e.g. right after one-way sends that
	// auto-create it); a failed consumer cannot be restarted, so build a new one.
	deadline := time.Now().Add(routeTimeout)
	for {
		c, err := rocketmq.NewPushConsumer(opts...)
		if err != nil {
			t.Fatalf("NewPushConsumer: %v", err)
		}
		if err := c.Subscribe(topic, po.selector, handler); err != nil {
			t.Fatalf("Subscribe(%s): %v", topic, err)
		}
		err = c.Start()
		if err == nil {
			t.Cleanup(func() { shutdownBounded(t, "push consumer "+group+"/"+inst, c.Shutdown) })
			return c
		}
		shutdownBounded(t, "failed push consumer", c.Shutdown)
		if !strings.Contains(err.Error(), "route info not found") || time.Now().After(deadline) {
			t.Fatalf("push consumer Start (group %s, topic %s): %v", group, topic, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func copyProps(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// expected describes one sent message for later comparison.
type expected struct {
	body  []byte
	tag   string
	keys  string
	props map[string]string
	msgID string // SendResult.MsgID (UNIQ_KEY), if known
}

// checkReceived compares the received set to the expected set (by body).
func checkReceived(t *testing.T, want []expected, got map[string]*primitive.MessageExt, topic string) {
	t.Helper()
	missing := 0
	for _, w := range want {
		m, ok := got[string(w.body)]
		if !ok {
			missing++
			if missing <= 5 {
				t.Errorf("message not received: body=%.60q", w.body)
			}
			continue
		}
		if m.Topic != topic {
			t.Errorf("body %.40q: topic %q, want %q", w.body, m.Topic, topic)
		}
		if !bytes.Equal(m.Body, w.body) {
			t.Errorf("body mismatch")
		}
		if m.GetTags() != w.tag {
			t.Errorf("body %.40q: tag %q, want %q", w.body, m.GetTags(), w.tag)
		}
		if m.GetKeys() != w.keys {
			t.Errorf("body %.40q: keys %q, want %q", w.body, m.GetKeys(), w.keys)
		}
		if w.msgID != "" && m.MsgId != w.msgID {
			t.Errorf("body %.40q: MsgId %q, want SendResult.MsgID %q", w.body, m.MsgId, w.msgID)
		}
		for k, v := range w.props {
			if gv := m.GetProperty(k); gv != v {
				t.Errorf("body %.40q: property %q = %q, want %q", w.body, k, gv, v)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d messages missing", missing, len(want))
	}
	if len(got) > len(want) {
		wantSet := map[string]bool{}
		for _, w := range want {
			wantSet[string(w.body)] = true
		}
		var extra []string
		for k := range got {
			if !wantSet[k] {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		t.Errorf("%d unexpected messages received, e.g. %.60q", len(extra), extra[0])
	}
}

func sendCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	t.Cleanup(cancel)
	return ctx
}

// awaitRoute polls the nameserver (through a fresh admin client each time, so that
// no cached "not found" is reused) until topic has a route with writable queues.
func awaitRoute(t *testing.T, topic string, timeout time.Duration) []*primitive.MessageQueue {
	t.Helper()
	ns := namesrv(t)
	var (
		mqs     []*primitive.MessageQueue
		lastErr error
	)
	deadline := time.Now().Add(timeout)
	for {
		ad, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver(ns)))
		if err != nil {
			t.Fatalf("NewAdmin: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		mqs, lastErr = ad.FetchPublishMessageQueues(ctx, topic)
		cancel()
		ad.Close()
		if lastErr == nil && len(mqs) > 0 {
			return mqs
		}
		if time.Now().After(deadline) {
			t.Fatalf("no route for %s on the nameserver within %s (last error: %v)", topic, timeout, lastErr)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// refreshRoutes makes the client instance `instance` (shared by every consumer and
// producer created with that instance name) reload the routes of all topics its
// consumers subscribe to and rebalance now, instead of at its next periodic route
// poll (every 30 s) and rebalance (every 20 s). The Go client has no public call for
// that; starting one more push consumer on the same instance (a throwaway group,
// subscribed to an existing topic) does both. Counterpart of the Java scenarios'
// updateTopicRouteInfoFromNameServer + rebalanceImmediately.
func refreshRoutes(t *testing.T, instance, existingTopic, throwawayGroup string) {
	t.Helper()
	startPushConsumer(t, existingTopic, throwawayGroup, nil, pushOpts{
		model:    consumer.Clustering,
		instance: instance,
		handler: func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			return consumer.ConsumeSuccess, nil
		},
	})
}

// startPullConsumer starts a plain pull consumer of topic (group, instance prefix as given), shut down when
// the test ends.
func startPullConsumer(t *testing.T, topic, group, instancePrefix string) rocketmq.PullConsumer {
	t.Helper()
	pc, err := rocketmq.NewPullConsumer(
		consumer.WithNameServer(namesrv(t)),
		consumer.WithGroupName(group),
		consumer.WithInstance(nextInstance(instancePrefix)),
	)
	if err != nil {
		t.Fatalf("NewPullConsumer: %v", err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{}); err != nil {
		t.Fatalf("pull Subscribe(%s): %v", topic, err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("pull consumer Start: %v", err)
	}
	t.Cleanup(func() { shutdownBounded(t, "pull consumer "+group, pc.Shutdown) })
	return pc
}

// brokerAddrOf is the address of the broker that stored a message: the store host of its offset message id,
// which is what the broker reports for itself.
func brokerAddrOf(t *testing.T, res *primitive.SendResult) string {
	t.Helper()
	id, err := primitive.UnmarshalMsgID([]byte(res.OffsetMsgID))
	if err != nil {
		t.Fatalf("cannot decode OffsetMsgID %q: %v", res.OffsetMsgID, err)
	}
	return fmt.Sprintf("%s:%d", id.Addr, id.Port)
}

// serverGap tells whether the runner named `name` among the server's known gaps (COMPAT_GAPS=name,...,
// the Go side of the runner's GAPS table): a check that server cannot pass is then left out, with a log line.
func serverGap(t *testing.T, name string) bool {
	for _, g := range strings.Split(os.Getenv("COMPAT_GAPS"), ",") {
		if strings.TrimSpace(g) == name {
			t.Logf("server gap %s (COMPAT_GAPS): that check is left out", name)
			return true
		}
	}
	return false
}

// envSeconds reads a duration in seconds from the environment (default def).
func envSeconds(t *testing.T, name string, def time.Duration) time.Duration {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		t.Fatalf("bad %s=%q (seconds)", name, v)
	}
	return time.Duration(f * float64(time.Second))
}
