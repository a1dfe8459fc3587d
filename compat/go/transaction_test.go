package compat

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// what the check listener saw for one message
type txCheck struct {
	at         time.Time
	topic      string
	body       string
	txID       string
	checkTimes string
}

// txListener decides by the message key: "commit*" / "rollback*" end the local
// transaction at once; "ucommit*" / "urollback*" answer UNKNOW first and commit / roll
// back when the broker checks; "again*" answers UNKNOW to the first check as well and
// commits at the second.
type txListener struct {
	mu     sync.Mutex
	checks map[string][]txCheck
}

func (l *txListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	switch k := m.GetKeys(); {
	case strings.HasPrefix(k, "commit"):
		return primitive.CommitMessageState
	case strings.HasPrefix(k, "rollback"):
		return primitive.RollbackMessageState
	default:
		return primitive.UnknowState
	}
}

func (l *txListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	k := m.GetKeys()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.checks[k] = append(l.checks[k], txCheck{
		at:         time.Now(),
		topic:      m.Topic,
		body:       string(m.Body),
		txID:       m.TransactionId,
		checkTimes: m.GetProperty(primitive.PropertyTranscationCheckTimes),
	})
	switch {
	case strings.HasPrefix(k, "ucommit"):
		return primitive.CommitMessageState
	case strings.HasPrefix(k, "again") && len(l.checks[k]) >= 2:
		return primitive.CommitMessageState
	case strings.HasPrefix(k, "again"):
		return primitive.UnknowState
	default: // urollback*, and anything checked that should not have been
		return primitive.RollbackMessageState
	}
}

func (l *txListener) snapshot() map[string][]txCheck {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]txCheck{}
	for k, v := range l.checks {
		out[k] = append([]txCheck(nil), v...)
	}
	return out
}

// Scenario 11: transactional messages from rocketmq.NewTransactionProducer. Committed ones are
// delivered exactly once, rolled-back ones never; UNKNOW makes the broker check back
// (CHECK_TRANSACTION_STATE) with the half message (original topic, body, transaction id,
// TRANSACTION_CHECK_TIMES) and act on the answer to the check. Needs a broker that checks
// often (ours: --transactionCheckInterval=2000, official: transactionCheckInterval=3000;
// checks start once a half message is transactionTimeOut = 6 s old); TX_CHECK_WAIT
// (seconds, default 45) bounds the wait for the checks.
func TestTransactionCommitRollbackAndCheck(t *testing.T) {
	ns := namesrv(t)
	t.Parallel()
	topic, group := names("Tx")
	checkWait := envSeconds(t, "TX_CHECK_WAIT", 45*time.Second)

	// create the topic with a plain message (half messages go to RMQ_SYS_TRANS_HALF_TOPIC)
	plain := newProducer(t, group+"_Plain")
	body := func(k string) string { return fmt.Sprintf("tx-%s-%s", runID(), k) }
	ctx, cancel := callCtx()
	res, err := plain.SendSync(ctx, primitive.NewMessage(topic, []byte(body("plain"))).WithTag("Tx").WithKeys([]string{"plain"}))
	cancel()
	if !checkSendResult(t, 0, topic, res, err) {
		t.FailNow()
	}

	// the consumer is live before any transaction starts, so an early delivery would be seen
	col := newCollector()
	startPushConsumer(t, topic, group, col, pushOpts{model: consumer.Clustering})
	if !col.waitFor(t, 1, consumeTimeout) {
		t.Fatalf("the plain message was not consumed within %s", consumeTimeout)
	}

	lis := &txListener{checks: map[string][]txCheck{}}
	txGroup := group + "_TxP"
	tp, err := rocketmq.NewTransactionProducer(lis,
		producer.WithNameServer(ns),
		producer.WithGroupName(txGroup),
		producer.WithInstanceName(nextInstance("tx")),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5*time.Second),
	)
	if err != nil {
		t.Fatalf("NewTransactionProducer: %v", err)
	}
	if err := tp.Start(); err != nil {
		t.Fatalf("transaction producer Start: %v", err)
	}
	t.Cleanup(func() { shutdownBounded(t, "transaction producer", tp.Shutdown) })

	keys := []string{"commit0", "rollback0", "ucommit0", "urollback0", "again0",
		"commit1", "rollback1", "ucommit1", "urollback1", "commit2", "rollback2"}
	wantState := map[string]primitive.LocalTransactionState{
		"commit": primitive.CommitMessageState, "rollback": primitive.RollbackMessageState,
		"ucommit": primitive.UnknowState, "urollback": primitive.UnknowState, "again": primitive.UnknowState,
	}
	sent := map[string]*primitive.TransactionSendResult{}
	sentAt := map[string]time.Time{}
	for i, k := range keys {
		sentAt[k] = time.Now()
		ctx, cancel := callCtx()
		r, err := tp.SendMessageInTransaction(ctx, primitive.NewMessage(topic, []byte(body(k))).WithTag("Tx").WithKeys([]string{k}))
		cancel()
		if err != nil {
			t.Fatalf("SendMessageInTransaction %s: %v", k, err)
		}
		if !checkSendResult(t, i, topic, r.SendResult, nil) {
			t.FailNow()
		}
		if w := wantState[strings.TrimRight(k, "0123456789")]; r.State != w {
			t.Errorf("%s: local transaction state %v, want %v", k, r.State, w)
		}
		sent[k] = r
	}
	committed := []string{"plain", "commit0", "commit1", "commit2", "ucommit0", "ucommit1", "again0"}
	checked := []string{"ucommit0", "ucommit1", "urollback0", "urollback1", "again0"}

	// before any check: only the plain and the directly committed messages
	direct := []expected{}
	for _, k := range []string{"plain", "commit0", "commit1", "commit2"} {
		direct = append(direct, expected{body: []byte(body(k)), tag: "Tx", keys: k})
	}
	if !col.waitFor(t, len(direct), consumeTimeout) {
		t.Errorf("directly committed messages: %d of %d consumed within %s", col.count(), len(direct), consumeTimeout)
	}
	time.Sleep(1500 * time.Millisecond)
	if len(lis.snapshot()) == 0 {
		checkReceived(t, direct, col.snapshot(), topic)
	}

	if !pollUntil(checkWait, func() bool {
		c := lis.snapshot()
		for _, k := range checked {
			if len(c[k]) == 0 {
				return false
			}
		}
		return len(c["again0"]) >= 2
	}) {
		c := lis.snapshot()
		for _, k := range checked {
			t.Logf("%s: %d check(s)", k, len(c[k]))
		}
		t.Fatalf("no check-back for every UNKNOW transaction (and a second one for again0) within %s", checkWait)
	}
	var want []expected
	for _, k := range committed {
		e := expected{body: []byte(body(k)), tag: "Tx", keys: k}
		if k != "plain" {
			e.msgID = sent[k].MsgID
		}
		want = append(want, e)
	}
	if !col.waitFor(t, len(want), consumeTimeout) {
		t.Errorf("only %d of %d committed messages consumed within %s", col.count(), len(want), consumeTimeout)
	}
	got := col.settle(2 * time.Second)
	checkReceived(t, want, got, topic)
	col.mu.Lock()
	if col.dups != 0 {
		t.Errorf("%d duplicate deliveries", col.dups)
	}
	col.mu.Unlock()
	for _, k := range committed[1:] {
		if m, ok := got[body(k)]; ok && m.GetProperty(primitive.PropertyProducerGroup) != txGroup {
			t.Errorf("%s: PGROUP %q, want %q", k, m.GetProperty(primitive.PropertyProducerGroup), txGroup)
		}
	}

	checks := lis.snapshot()
	var summary []string
	for k, list := range checks {
		summary = append(summary, fmt.Sprintf("%s=%d", k, len(list)))
	}
	sort.Strings(summary)
	t.Logf("check-backs per key: %v", summary)
	for k := range checks {
		if !containsStr(checked, k) {
			t.Errorf("%s was checked although its local transaction ended with commit/rollback", k)
		}
	}
	for _, k := range checked {
		list := checks[k]
		if len(list) == 0 {
			continue
		}
		// a half message is checked once it is transactionTimeOut (default 6 s) old; 1 s margin
		first := list[0].at.Sub(sentAt[k])
		t.Logf("first check of %s %.1fs after sending", k, first.Seconds())
		if first < 5*time.Second {
			t.Errorf("%s: checked %.1fs after sending, before the half message was transactionTimeOut (6 s) old", k, first.Seconds())
		}
		for i, c := range list {
			if c.topic != topic {
				t.Errorf("%s check %d: topic %q, want the real topic %q", k, i+1, c.topic, topic)
			}
			if c.body != body(k) {
				t.Errorf("%s check %d: body %q", k, i+1, c.body)
			}
			if c.txID != sent[k].MsgID {
				t.Errorf("%s check %d: TransactionId %q, want %q", k, i+1, c.txID, sent[k].MsgID)
			}
			if c.checkTimes != fmt.Sprint(i+1) {
				t.Errorf("%s check %d: TRANSACTION_CHECK_TIMES %q, want %q", k, i+1, c.checkTimes, fmt.Sprint(i+1))
			}
		}
	}
	if list := checks["again0"]; len(list) >= 2 {
		t.Logf("again0: second check %.1fs after the first", list[1].at.Sub(list[0].at).Seconds())
	}
}
